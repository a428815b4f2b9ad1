/// One consistent view of an app's action log and of who belongs to which group, for the event
/// stream: replay `actions(afterSeq:limit:)` up to `headSeq`, then continue with the commit
/// listener's batches (whose seqs follow without a gap).
///
/// Valid only inside the `ModerationService.withActionLog` closure that provides it.
public struct ActionLogSnapshot {
    let snapshot: any StoreSnapshot
    let appID: Int64?
    /// When the snapshot was taken (the service's clock): what a ban's expiry is judged against.
    let now: Int64

    /// The step after a subscription's arguments: its acting user `uid` (validated) is not banned
    /// from the app now (`ERR_USER_BANNED_FROM_APP`), as every call checks. A shadow ban, or one
    /// past its expiry, lets them through.
    public func requireNotBannedFromApp(_ uid: String) throws(ModerationError) {
        guard let appID, let ban = try snapshot.appBanStanding(appID: appID, uid: uid), ban.blocks(at: now) else {
            return
        }
        throw .bannedFromApp(uid)
    }

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
    public func actions(afterSeq: UInt64, limit: Int, kinds: Set<ActionKind> = []) throws(ModerationError)
        -> [ActionRecord]
    {
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

    /// True when the app has a user `uid`.
    public func userExists(_ uid: String) throws(ModerationError) -> Bool {
        guard let appID else { return false }
        return try snapshot.user(appID: appID, uid: uid) != nil
    }

    /// True when the app has a group `guid` now.
    public func groupExists(_ guid: String) throws(ModerationError) -> Bool {
        try groupType(guid) != nil
    }

    /// The type of the group `guid`, or nil when the app has no such group now.
    public func groupType(_ guid: String) throws(ModerationError) -> GroupType? {
        guard let appID else { return nil }
        return try snapshot.group(appID: appID, guid: guid)?.group.type
    }

    /// Whether `uid` was a member of the group `guid` just before seq `seq`, as far as the
    /// retained log tells: the user's last membership action on the group before it (joined,
    /// added, an invite accepted, a join request approved, created as owner → yes; left, kicked, banned, or the group deleted → no). For the
    /// event stream rewinding a user's membership across a group's deletion.
    public func wasMember(_ uid: String, of guid: String, before seq: UInt64) throws(ModerationError) -> Bool {
        guard let appID, seq > 1 else { return false }
        let kinds: Set<ActionKind> = [
            .created, .joined, .added, .inviteAccepted, .joinRequestApproved, .left, .kicked, .banned, .deleted,
        ]
        var cursor = try snapshot.logBounds(appID: appID).prunedThrough
        var member = false
        while cursor + 1 < seq {
            let window = min(cursor + Self.scanWindow, seq - 1)
            let page = try snapshot.actions(
                appID: appID,
                query: ActionLogQuery(afterSeq: cursor, limit: Self.scanPage, kinds: kinds, throughSeq: window))
            for action in page where action.group.guid == guid {
                if action.kind == .deleted {
                    member = false
                } else if action.actionOn?.uid == uid {
                    member = [.created, .joined, .added, .inviteAccepted, .joinRequestApproved].contains(action.kind)
                }
            }
            cursor = page.count == Self.scanPage ? page.last!.seq : window
        }
        return member
    }

    private static let scanWindow: UInt64 = 50_000
    private static let scanPage = 1_000
}
