/// The writer's part of content rules: AddContentRules and DeleteContentRules. A set belongs to
/// the app (`guid` empty) or to one group; each call that changes it records one
/// `contentRulesChanged` action and moves the set's version to that action's seq, which is how
/// every server learns that its compiled copy is stale.
extension WriteContext {
    /// The most rules the app's set holds.
    static let maxAppContentRules = 10_000
    /// The most rules a group's set holds.
    static let maxGroupContentRules = 1_000

    /// Steps 2–4 of the calls that change a set: the app's set is the app's alone; a group's,
    /// its owner's and admins' (the group visible, the actor a member of admin rank) and the
    /// app's. Returns the group, or `StoredGroup.appWide` for the app's set.
    mutating func contentRulesAccess(_ guid: String, toDo what: String) throws(ModerationError) -> StoredGroup {
        if guid.isEmpty {
            try requireApp(toDo: "\(what) of the app")
            return .appWide
        }
        let access = try access(guid)
        try access.requireVisible()
        try access.requireMember()
        try access.requireRank(.admin, toDo: what)
        return access.stored
    }

    /// Adds `rules` to the set of `guid` (`AddContentRules`). Each rule was checked on its own
    /// already (`refusals`: the reason of each refused one, by position); a rule whose kind and
    /// pattern the set holds is answered with that rule, unchanged. The set may not grow past its
    /// limit (`ERR_RATE_LIMITED` for the whole call, with the limit in details).
    mutating func addContentRules(guid: String, rules: [NewContentRule], refusals: [Int: ModerationError])
        throws(ModerationError) -> ContentRulesResult
    {
        let group = try contentRulesAccess(guid, toDo: "add content rules")
        let appID = try ensureAppID()
        var outcomes: [ContentRuleOutcome] = []
        var added: [ContentRule] = []
        var addedByPattern: [ContentRuleKey: ContentRule] = [:]
        for (index, new) in rules.enumerated() {
            if let refusal = refusals[index] {
                outcomes.append(ContentRuleOutcome(rule: nil, error: refusal, changed: false))
                continue
            }
            guard let kind = new.kind, let action = new.action else {
                preconditionFailure("a rule without kind or action is refused before the write")
            }
            let key = ContentRuleKey(kind: kind, pattern: new.pattern)
            var existing = addedByPattern[key]
            if existing == nil {
                existing = try tx.contentRule(appID: appID, guid: guid, kind: kind, pattern: new.pattern)
            }
            if let existing {
                outcomes.append(ContentRuleOutcome(rule: existing, changed: false))
                continue
            }
            let rule = ContentRule(
                id: 0, guid: guid, kind: kind, pattern: new.pattern, action: action, description: new.description,
                createdAt: now, createdBy: caller.actionUID)
            addedByPattern[key] = rule
            added.append(rule)
            outcomes.append(ContentRuleOutcome(rule: rule, changed: true))
        }
        guard !added.isEmpty else { return ContentRulesResult(outcomes: outcomes, action: nil) }
        let limit = guid.isEmpty ? Self.maxAppContentRules : Self.maxGroupContentRules
        let count = try tx.contentRuleCount(appID: appID, guid: guid)
        guard count + added.count <= limit else {
            throw ModerationError(
                .rateLimited,
                "\(guid.isEmpty ? "the app's content rules" : "group \(guid)'s content rules") would number "
                    + "\(count + added.count), over the limit of \(limit); delete some first",
                details: ["limit": String(limit), "count": String(count)])
        }
        var ids: [ContentRuleKey: UInt64] = [:]
        for rule in added {
            ids[ContentRuleKey(kind: rule.kind, pattern: rule.pattern)] = try tx.insertContentRule(
                appID: appID, rule)
        }
        for index in outcomes.indices {
            guard var rule = outcomes[index].rule, rule.id == 0 else { continue }
            rule.id = ids[ContentRuleKey(kind: rule.kind, pattern: rule.pattern)] ?? 0
            outcomes[index].rule = rule
        }
        let action = try record(.contentRulesChanged, on: nil, group: group, rulesAdded: added.count)
        return try changed(appID: appID, guid: guid, outcomes: outcomes, action: action)
    }

    /// Deletes the rules `ids` from the set of `guid` (`DeleteContentRules`): an id the set does
    /// not hold is answered `ERR_CONTENT_RULE_NOT_FOUND`.
    mutating func deleteContentRules(guid: String, ids: [UInt64]) throws(ModerationError) -> ContentRulesResult {
        let group = try contentRulesAccess(guid, toDo: "delete content rules")
        var outcomes: [ContentRuleOutcome] = []
        var removed = 0
        let appID = try appID()
        for id in ids {
            guard let appID, let rule = try tx.contentRule(appID: appID, guid: guid, id: id) else {
                let set = guid.isEmpty ? "the app's content rules" : "group \(guid)'s content rules"
                outcomes.append(
                    ContentRuleOutcome(
                        rule: nil, error: ModerationError(.contentRuleNotFound, "\(set) have no rule \(id)"),
                        changed: false, id: id))
                continue
            }
            try tx.deleteContentRule(appID: appID, id: id)
            removed += 1
            outcomes.append(ContentRuleOutcome(rule: rule, changed: true, id: id))
        }
        guard removed > 0, let appID else { return ContentRulesResult(outcomes: outcomes, action: nil) }
        let action = try record(.contentRulesChanged, on: nil, group: group, rulesRemoved: removed)
        return try changed(appID: appID, guid: guid, outcomes: outcomes, action: action)
    }

    /// Moves the set's version to `action`'s seq: the result a change returns.
    private func changed(appID: Int64, guid: String, outcomes: [ContentRuleOutcome], action: ActionRecord)
        throws(ModerationError) -> ContentRulesResult
    {
        try tx.setContentRuleSetVersion(appID: appID, guid: guid, version: action.seq)
        var result = ContentRulesResult(outcomes: outcomes, action: action)
        result.setVersion = ContentRuleSetVersion(appID: appID, guid: guid, version: action.seq)
        return result
    }
}

/// What makes two rules of a set the same rule: their kind and pattern as written.
struct ContentRuleKey: Hashable {
    var kind: ContentRuleKind
    var pattern: String
}
