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
    /// included.
    public func checkPost(_ caller: Caller, checks: [PostCheck]) throws(ModerationError) -> [PostVerdict] {
        guard (1...Validation.maxBatch).contains(checks.count) else {
            throw .invalid("checks", "give 1–\(Validation.maxBatch) checks (got \(checks.count))")
        }
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
            normalized.append(PostCheck(guid: guid, uid: uid))
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
            return standings.map { PostingDecision.verdict($0, at: context.now) }
        }
    }
}
