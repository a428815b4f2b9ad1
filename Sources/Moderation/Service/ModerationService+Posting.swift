internal import ContentMatching
internal import ThreadSupport

extension ModerationService {
    /// May these users post in these groups now (`CheckPost`)? One verdict per check, in order;
    /// a refusal is a verdict (`PostingDecision`), not a failed call.
    ///
    /// The call fails only on its own arguments: 1–100 checks, each guid valid and each uid valid
    /// or empty (the acting user; the app must name one: `ERR_INVALID_ARGUMENT`); then, as every
    /// call, an acting user banned from the app: `ERR_USER_BANNED_FROM_APP`; then a user asking
    /// about anyone but themselves: `ERR_PERMISSION_DENIED`. It is the hot path of a chat backend
    /// (a message service asks before every message): one snapshot, and the store reads every
    /// pair's standing at once (`StoreSnapshot.postingStandings`), the user's ban from the app
    /// included. Then, for each pair whose standing allows the post, its text is scanned with the
    /// app's and the group's content rules (`ContentDecision`): on the calling thread, with its
    /// own scratch space, in time linear in the text (`maxPostText` bytes at most: more is
    /// `ERR_INVALID_ARGUMENT` naming the check).
    public func checkPost(_ caller: Caller, checks: [PostCheck]) throws(ModerationError) -> [PostVerdict] {
        try Validation.count(checks.count, field: "checks", max: Validation.maxBatch, noun: "checks")
        let validated = try ValidatedCaller(caller)
        let actor = validated.actor
        var normalized: [PostCheck] = []
        normalized.reserveCapacity(checks.count)
        for (index, check) in checks.enumerated() {
            let guid = try Validation.identifier(check.guid, field: "checks[\(index)].guid")
            let uid: String
            if check.uid.isEmpty {
                guard let actor else { throw .invalid("checks[\(index)].uid", "is required when the app asks") }
                uid = actor
            } else {
                uid = try Validation.identifier(check.uid, field: "checks[\(index)].uid")
            }
            guard check.text.utf8.count <= Self.maxPostText else {
                throw .invalid(
                    "checks[\(index)].text",
                    "must be at most \(Self.maxPostText) bytes of UTF-8 (got \(check.text.utf8.count))")
            }
            normalized.append(PostCheck(guid: guid, uid: uid, text: check.text))
        }
        return try read(validated, arrivedAt: caller.receivedAt) {
            (context: ReadContext) throws(ModerationError) -> [PostVerdict] in
            if let actor, let other = normalized.first(where: { $0.uid != actor }) {
                throw ModerationError(.permissionDenied, "\(actor) may not check whether \(other.uid) may post")
            }
            guard let appID = try context.appID() else {
                return Array(repeating: PostVerdict(refusal: .groupNotFound), count: checks.count)
            }
            let standings = try context.snapshot.postingStandings(appID: appID, checks: normalized)
            var verdicts = standings.map { PostingDecision.verdict($0, at: context.now) }
            for index in verdicts.indices where verdicts[index].allowed && !normalized[index].text.isEmpty {
                let check = normalized[index]
                verdicts[index] = ContentDecision.verdict(
                    verdicts[index], matches: scan(check.text, appID: appID, guid: check.guid))
            }
            return verdicts
        }
    }

    /// The matches of the app's and the group's content rules in `text`, in order of start.
    private func scan(_ text: String, appID: Int64, guid: String) -> [(match: ContentMatch, action: ContentAction)] {
        let found = contentRules.sets(appID: appID, guid: guid)
        let sets = [found.app, found.group].compactMap { $0 }.filter { !$0.compiled.rules.isEmpty }
        guard !sets.isEmpty else { return [] }
        let perSet = Self.scanners.value.scan(text, with: sets.map(\.compiled))
        var matches: [(match: ContentMatch, action: ContentAction)] = []
        for (set, setMatches) in zip(sets, perSet) {
            for match in setMatches {
                guard let action = set.actions[match.ruleID] else { continue }
                matches.append((match, action))
            }
        }
        if sets.count > 1 {
            matches.sort {
                ($0.match.start, $0.match.end, $0.match.ruleID) < ($1.match.start, $1.match.end, $1.match.ruleID)
            }
        }
        return matches
    }

    /// Each thread's scanner: its Hyperscan scratch space and buffers, never shared.
    private static let scanners = ThreadLocal { ContentScanner() }
}
