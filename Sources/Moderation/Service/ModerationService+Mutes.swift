extension ModerationService {
    /// Mutes a member (`MuteMember`): they stay a member but may not post (`CheckPost`). Admins
    /// and moderators outranking them.
    ///
    /// Order: arguments → group visible → actor member → actor admin/moderator → target exists →
    /// not self → not the owner (`ERR_CANNOT_MUTE_OWNER`) → target member (`ERR_NOT_A_MEMBER`) →
    /// not muted (`ERR_ALREADY_MUTED`, or `changed == false` with `ifNotMuted`) → actor outranks
    /// target. `durationMs` 0 mutes until unmuted.
    public func muteMember(
        _ caller: Caller, guid: String, uid: String, reason: String = "", durationMs: Int64 = 0,
        ifNotMuted: Bool = false,
        replay: @escaping ReplayEncoder<MuteResult>,
        completion: @escaping @Sendable (MutationResult<MuteResult>) -> Void
    ) {
        submitChange(
            caller, guid: guid, uid: uid, .mute(reason: reason, durationMs: durationMs, ifNotMuted: ifNotMuted),
            replay: replay, completion: completion)
    }

    /// Lifts a member's mute (`UnmuteMember`): admins and moderators outranking them.
    ///
    /// Order: arguments → group visible → actor member → actor admin/moderator → target exists →
    /// not self → target member (`ERR_NOT_A_MEMBER`) → muted (`ERR_USER_NOT_MUTED`, or
    /// `changed == false` with `onlyIfMuted`) → actor outranks target.
    public func unmuteMember(
        _ caller: Caller, guid: String, uid: String, onlyIfMuted: Bool = false,
        replay: @escaping ReplayEncoder<LiftResult>,
        completion: @escaping @Sendable (MutationResult<LiftResult>) -> Void
    ) {
        submitChange(
            caller, guid: guid, uid: uid, .unmute(onlyIfMuted: onlyIfMuted), replay: replay, completion: completion)
    }

    /// Mutes up to 100 members (`BulkMuteMembers`) with one reason and duration: steps 1–4 fail
    /// the whole call, steps 5–9 give a result per uid.
    public func bulkMuteMembers(
        _ caller: Caller, guid: String, uids: [String], reason: String = "", durationMs: Int64 = 0,
        ifNotMuted: Bool = false,
        replay: @escaping ReplayEncoder<[String: UserResult]>,
        completion: @escaping @Sendable (MutationResult<[String: UserResult]>) -> Void
    ) {
        submitBulk(
            caller, guid: guid, uids: uids, .mute(reason: reason, durationMs: durationMs, ifNotMuted: ifNotMuted),
            replay: replay, completion: completion)
    }

    /// Unmutes up to 100 members (`BulkUnmuteMembers`).
    public func bulkUnmuteMembers(
        _ caller: Caller, guid: String, uids: [String], onlyIfMuted: Bool = false,
        replay: @escaping ReplayEncoder<[String: UserResult]>,
        completion: @escaping @Sendable (MutationResult<[String: UserResult]>) -> Void
    ) {
        submitBulk(
            caller, guid: guid, uids: uids, .unmute(onlyIfMuted: onlyIfMuted), replay: replay, completion: completion)
    }
}
