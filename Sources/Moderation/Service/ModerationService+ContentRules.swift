internal import ContentMatching

extension ModerationService {
    /// The most rules one AddContentRules or DeleteContentRules call takes.
    static let maxContentRulesPerCall = 1_000
    /// The longest pattern, in characters.
    static let maxContentPattern = 200
    /// The longest post text CheckPost scans, in bytes of UTF-8.
    static let maxPostText = 10_000

    /// Adds content rules to the app's set (`guid` empty) or a group's (`AddContentRules`).
    ///
    /// Order: arguments (1–1 000 rules; `guid` valid or empty) → the acting user not banned from
    /// the app → who may (the app's set: the app only; a group's: the group visible, the actor a
    /// member, owner or admin, or the app) → each rule on its own: kind and action given, pattern
    /// 1–200 characters, description ≤ 255, and a pattern the engine compiles (a regex with
    /// backreferences or lookaround is refused with Hyperscan's reason) — a refused rule is its
    /// own `ERR_INVALID_ARGUMENT` result → the set's limit (10 000 for the app, 1 000 per group:
    /// `ERR_RATE_LIMITED` for the whole call, nothing added). A rule whose kind and pattern the set
    /// holds is answered with that rule, unchanged. The call answers once the new set applies on
    /// this server (compiled and swapped in); other servers pick it up within
    /// `Configuration.contentRulePollMs` and their compile time.
    public func addContentRules(
        _ caller: Caller, guid: String, rules: [NewContentRule], replay: @escaping ReplayEncoder<ContentRulesResult>,
        completion: @escaping @Sendable (MutationResult<ContentRulesResult>) -> Void
    ) {
        submit(caller, replay: replay, completion: appliedFirst(completion)) {
            () throws(ModerationError) -> WriteBody<ContentRulesResult> in
            let guid = try Self.contentRuleSet(guid)
            try Validation.count(rules.count, field: "rules", max: Self.maxContentRulesPerCall, noun: "rules")
            var found: [Int: ModerationError] = [:]
            for (index, rule) in rules.enumerated() {
                if let refusal = Self.refusal(of: rule, at: index) { found[index] = refusal }
            }
            let refusals = found
            return { (context: inout WriteContext) throws(ModerationError) -> ContentRulesResult in
                try context.addContentRules(guid: guid, rules: rules, refusals: refusals)
            }
        }
    }

    /// Deletes content rules by id from the app's set or a group's (`DeleteContentRules`); who
    /// may is as for `addContentRules`. An id the set does not hold is its own
    /// `ERR_CONTENT_RULE_NOT_FOUND` result.
    public func deleteContentRules(
        _ caller: Caller, guid: String, ids: [UInt64], replay: @escaping ReplayEncoder<ContentRulesResult>,
        completion: @escaping @Sendable (MutationResult<ContentRulesResult>) -> Void
    ) {
        submit(caller, replay: replay, completion: appliedFirst(completion)) {
            () throws(ModerationError) -> WriteBody<ContentRulesResult> in
            let guid = try Self.contentRuleSet(guid)
            try Validation.count(ids.count, field: "ids", max: Self.maxContentRulesPerCall, noun: "ids")
            if let zero = ids.firstIndex(of: 0) { throw .invalid("ids[\(zero)]", "0 is no rule's id") }
            return { (context: inout WriteContext) throws(ModerationError) -> ContentRulesResult in
                try context.deleteContentRules(guid: guid, ids: ids)
            }
        }
    }

    /// Lists a content rule set oldest first, keyset paged by id (`ListContentRules`): as
    /// `addContentRules`, and the group's moderators.
    public func listContentRules(_ caller: Caller, guid: String, limit: Int = 0, cursor: String = "")
        throws(ModerationError) -> Page<ContentRule>
    {
        let guid = try Self.contentRuleSet(guid)
        let limit = try Validation.limit(limit)
        let after = try Cursor.contentRuleID(cursor)
        return try read(caller) { (context: ReadContext) throws(ModerationError) -> Page<ContentRule> in
            if guid.isEmpty {
                try context.caller.requireApp(toDo: "list the app's content rules")
            } else {
                _ = try context.moderatorAccess(guid, toDo: "list content rules")
            }
            guard let appID = try context.appID() else { return .empty }
            let rows = try context.snapshot.contentRules(
                appID: appID, guid: guid, afterID: after ?? 0, limit: limit + 1)
            return Page(rows: rows, limit: limit) { Cursor.encode(contentRuleID: $0.id) }
        }
    }

    /// The set a call names: empty for the app's, else a valid guid.
    private static func contentRuleSet(_ guid: String) throws(ModerationError) -> String {
        guid.isEmpty ? "" : try Validation.identifier(guid, field: "guid")
    }

    /// Why rule `index` of an AddContentRules call is refused, if it is: its fields, then the
    /// engine's verdict on its pattern alone.
    private static func refusal(of rule: NewContentRule, at index: Int) -> ModerationError? {
        let field = "rules[\(index)]"
        guard let kind = rule.kind else { return .invalid("\(field).kind", "is required (WORD, REGEX or DOMAIN)") }
        guard rule.action != nil else { return .invalid("\(field).action", "is required (BLOCK or FLAG)") }
        do throws(ModerationError) {
            try Validation.text(rule.pattern, field: "\(field).pattern", max: maxContentPattern, min: 1)
            try Validation.text(rule.description, field: "\(field).description", max: Validation.maxDescription)
        } catch {
            return error
        }
        let engineRule = ContentMatching.ContentRule(id: 0, kind: kind.engineKind, pattern: rule.pattern)
        guard let refused = CompiledRuleSet.validate(engineRule) else { return nil }
        return .invalid("\(field).pattern", "\"\(rule.pattern)\" is refused: \(refused.reason)")
    }

    /// `completion`, run once the set the change made applies on this server.
    private func appliedFirst(_ completion: @escaping @Sendable (MutationResult<ContentRulesResult>) -> Void)
        -> @Sendable (MutationResult<ContentRulesResult>) -> Void
    {
        let sets = contentRules
        return { outcome in
            guard case .done(.success(let result), _) = outcome, let version = result.setVersion else {
                return completion(outcome)
            }
            sets.refresh(version) { completion(outcome) }
        }
    }
}
