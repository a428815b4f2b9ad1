/// What a read needs: the snapshot, the validated caller and the time of the read.
struct ReadContext {
    let snapshot: any StoreSnapshot
    let caller: ValidatedCaller
    let now: Int64

    /// The caller's app key, or nil when the app has no data yet (then nothing exists for it).
    func appID() throws(ModerationError) -> Int64? {
        try snapshot.appID(named: caller.app)
    }

    /// Step 2 for reads: the group and the actor's standing in it.
    func access(_ guid: String) throws(ModerationError) -> GroupAccess {
        try GroupAccess.load(snapshot, appID: appID(), guid: guid, caller: caller)
    }

    /// Steps 2–4 of a moderators' list (banned members, invites, join requests, reports): the
    /// group visible, the actor a member, admin or moderator — as `WriteContext.moderatorAccess`.
    func moderatorAccess(_ guid: String, toDo what: String) throws(ModerationError) -> GroupAccess {
        let access = try access(guid)
        try access.requireVisible()
        try access.requireMember()
        try access.requireRank(.moderator, toDo: what)
        return access
    }

    /// The step after the arguments, for every read on behalf of a user: the acting user is not
    /// banned from the app (`ERR_USER_BANNED_FROM_APP`). A shadow ban, or a ban past its expiry,
    /// lets them through; the app has nothing to check.
    func requireNotBannedFromApp() throws(ModerationError) {
        guard let actor = caller.actor, let appID = try appID(),
            let ban = try snapshot.appBanStanding(appID: appID, uid: actor), ban.blocks(at: now)
        else { return }
        throw .bannedFromApp(actor)
    }

    /// The ban of `uid` in the group when one applies now.
    func activeBan(groupID: Int64, uid: String) throws(ModerationError) -> Ban? {
        guard let ban = try snapshot.ban(groupID: groupID, uid: uid), ban.isActive(at: now) else { return nil }
        return ban
    }
}
