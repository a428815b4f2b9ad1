/// One consistent view of an app's action log and of who belongs to which group, for the event
/// stream: replay `actions(afterSeq:limit:)` up to `headSeq`, then continue with the commit
/// listener's batches (whose seqs follow without a gap).
///
/// Valid only inside the `ModerationService.withActionLog` closure that provides it.
public struct ActionLogSnapshot {
    let snapshot: any StoreSnapshot
    let appID: Int64?

    /// Seq of the newest action (0 when the app has none).
    public func headSeq() throws(ModerationError) -> UInt64 {
        guard let appID else { return 0 }
        return try snapshot.logBounds(appID: appID).headSeq
    }

    /// The first seq still retained; a resume point below `oldestRetainedSeq() - 1` is expired.
    public func oldestRetainedSeq() throws(ModerationError) -> UInt64 {
        guard let appID else { return 1 }
        return try snapshot.logBounds(appID: appID).oldestRetainedSeq
    }

    /// Up to `limit` actions of the whole app with a greater seq, in seq order.
    public func actions(afterSeq: UInt64, limit: Int, kinds: Set<ActionKind> = []) throws(ModerationError) -> [ActionRecord] {
        guard let appID else { return [] }
        return try snapshot.actions(appID: appID, query: ActionLogQuery(afterSeq: afterSeq, limit: limit, kinds: kinds))
    }

    /// The guids of the groups `uid` is a member of now.
    public func groups(of uid: String) throws(ModerationError) -> [String] {
        guard let appID else { return [] }
        return try snapshot.groupsOf(appID: appID, uid: uid)
    }

    /// `uid`'s scope in the group `guid`, or nil when not a member (or no such group).
    public func scope(of uid: String, inGroup guid: String) throws(ModerationError) -> Scope? {
        guard let appID, let group = try snapshot.group(appID: appID, guid: guid) else { return nil }
        return try snapshot.membership(groupID: group.id, uid: uid)?.scope
    }
}
