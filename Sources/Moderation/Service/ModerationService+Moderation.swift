extension ModerationService {
    /// Kicks a member, who may rejoin (`KickMember`): admins and moderators outranking them.
    ///
    /// Order: arguments → group visible → actor member → actor admin/moderator → target exists →
    /// not self → not the owner (`ERR_CANNOT_KICK_OWNER`) → target member (`ERR_NOT_A_MEMBER`) →
    /// actor outranks target.
    public func kickMember(
        _ caller: Caller, guid: String, uid: String, replay: @escaping ReplayEncoder<ActionRecord>,
        completion: @escaping @Sendable (MutationResult<ActionRecord>) -> Void
    ) {
        submitChange(caller, guid: guid, uid: uid, .kick, replay: replay, completion: completion)
    }

    /// Bans a user (`BanMember`), removing them when a member: admins and moderators outranking
    /// them; a non-member may be banned pre-emptively.
    ///
    /// Order: arguments → group visible → actor member → actor admin/moderator → target exists →
    /// not self → not the owner (`ERR_CANNOT_BAN_OWNER`) → not banned (`ERR_ALREADY_BANNED`, or
    /// `changed == false` with `ifNotBanned`) → actor outranks target. `durationMs` 0 is
    /// permanent.
    public func banMember(
        _ caller: Caller, guid: String, uid: String, reason: String = "", durationMs: Int64 = 0,
        ifNotBanned: Bool = false,
        replay: @escaping ReplayEncoder<BanResult>, completion: @escaping @Sendable (MutationResult<BanResult>) -> Void
    ) {
        submitChange(
            caller, guid: guid, uid: uid, .ban(reason: reason, durationMs: durationMs, ifNotBanned: ifNotBanned),
            replay: replay, completion: completion)
    }

    /// Lifts a ban (`UnbanMember`); the user is not re-added. Admins and moderators outranking
    /// the scope the user had before the ban.
    ///
    /// Order: arguments → group visible → actor member → actor admin/moderator → target exists →
    /// not self → banned (`ERR_USER_NOT_BANNED`, or `changed == false` with `onlyIfBanned`) →
    /// actor outranks the former scope.
    public func unbanMember(
        _ caller: Caller, guid: String, uid: String, onlyIfBanned: Bool = false,
        replay: @escaping ReplayEncoder<LiftResult>,
        completion: @escaping @Sendable (MutationResult<LiftResult>) -> Void
    ) {
        submitChange(
            caller, guid: guid, uid: uid, .unban(onlyIfBanned: onlyIfBanned), replay: replay, completion: completion)
    }

    /// Changes a member's scope (`ChangeMemberScope`): admins outranking the member; only the
    /// owner (or the app) grants or revokes admin.
    ///
    /// Order: arguments → group visible → actor member → actor admin → target exists → not self
    /// → not the owner (`ERR_CANNOT_CHANGE_OWNER_SCOPE`) → target member → rank → not the same
    /// scope (`ERR_SAME_SCOPE`).
    public func changeMemberScope(
        _ caller: Caller, guid: String, uid: String, scope: Scope, replay: @escaping ReplayEncoder<ScopeChangeResult>,
        completion: @escaping @Sendable (MutationResult<ScopeChangeResult>) -> Void
    ) {
        submitOnUser(caller, guid: guid, uid: uid, touching: true, replay: replay, completion: completion) {
            (context: inout WriteContext, guid: String, uid: String) throws(ModerationError) -> ScopeChangeResult in
            try context.changeMemberScope(guid: guid, uid: uid, to: scope)
        }
    }

    /// Makes another member the owner (`TransferOwnership`): the owner or the app.
    ///
    /// Order: arguments → group visible → actor member → actor owner → target exists → not self
    /// (for the app: not the current owner) → target member. The new owner gets scope admin; the
    /// old owner stays a member with scope admin.
    public func transferOwnership(
        _ caller: Caller, guid: String, uid: String, replay: @escaping ReplayEncoder<GroupActionResult>,
        completion: @escaping @Sendable (MutationResult<GroupActionResult>) -> Void
    ) {
        submitOnUser(caller, guid: guid, uid: uid, touching: true, replay: replay, completion: completion) {
            (context: inout WriteContext, guid: String, uid: String) throws(ModerationError) -> GroupActionResult in
            try context.transferOwnership(guid: guid, uid: uid)
        }
    }

    /// Kicks up to 100 members (`BulkKickMembers`): steps 1–4 fail the whole call, steps 5–9
    /// give a result per uid.
    public func bulkKickMembers(
        _ caller: Caller, guid: String, uids: [String], replay: @escaping ReplayEncoder<[String: UserResult]>,
        completion: @escaping @Sendable (MutationResult<[String: UserResult]>) -> Void
    ) {
        submitBulk(caller, guid: guid, uids: uids, .kick, replay: replay, completion: completion)
    }

    /// Bans up to 100 users (`BulkBanMembers`) with one reason and duration.
    public func bulkBanMembers(
        _ caller: Caller, guid: String, uids: [String], reason: String = "", durationMs: Int64 = 0,
        ifNotBanned: Bool = false,
        replay: @escaping ReplayEncoder<[String: UserResult]>,
        completion: @escaping @Sendable (MutationResult<[String: UserResult]>) -> Void
    ) {
        submitBulk(
            caller, guid: guid, uids: uids, .ban(reason: reason, durationMs: durationMs, ifNotBanned: ifNotBanned),
            replay: replay, completion: completion)
    }

    /// Unbans up to 100 users (`BulkUnbanMembers`).
    public func bulkUnbanMembers(
        _ caller: Caller, guid: String, uids: [String], onlyIfBanned: Bool = false,
        replay: @escaping ReplayEncoder<[String: UserResult]>,
        completion: @escaping @Sendable (MutationResult<[String: UserResult]>) -> Void
    ) {
        submitBulk(
            caller, guid: guid, uids: uids, .unban(onlyIfBanned: onlyIfBanned), replay: replay, completion: completion)
    }
}
