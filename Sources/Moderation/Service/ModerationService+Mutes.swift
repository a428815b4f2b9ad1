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
            caller, guid: guid, uid: uid, toDo: "mute members", replay: replay, completion: completion,
            validate: { () throws(ModerationError) in try Self.validateMute(reason: reason, durationMs: durationMs) }
        ) {
            (context: inout WriteContext, access: inout GroupAccess, uid: String) throws(ModerationError) -> MuteResult
            in
            try context.muteOne(&access, uid: uid, reason: reason, durationMs: durationMs, ifNotMuted: ifNotMuted)
        }
    }

    /// Lifts a member's mute (`UnmuteMember`): admins and moderators outranking them.
    ///
    /// Order: arguments → group visible → actor member → actor admin/moderator → target exists →
    /// not self → target member (`ERR_NOT_A_MEMBER`) → muted (`ERR_USER_NOT_MUTED`, or
    /// `changed == false` with `onlyIfMuted`) → actor outranks target.
    public func unmuteMember(
        _ caller: Caller, guid: String, uid: String, onlyIfMuted: Bool = false,
        replay: @escaping ReplayEncoder<UnmuteResult>,
        completion: @escaping @Sendable (MutationResult<UnmuteResult>) -> Void
    ) {
        submitChange(caller, guid: guid, uid: uid, toDo: "unmute members", replay: replay, completion: completion) {
            (context: inout WriteContext, access: inout GroupAccess, uid: String) throws(ModerationError)
                -> UnmuteResult
            in
            try context.unmuteOne(&access, uid: uid, onlyIfMuted: onlyIfMuted)
        }
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
            caller, guid: guid, uids: uids, toDo: "mute members", replay: replay, completion: completion,
            validate: { () throws(ModerationError) in try Self.validateMute(reason: reason, durationMs: durationMs) }
        ) {
            (context: inout WriteContext, access: inout GroupAccess, uid: String) throws(ModerationError) -> UserResult
            in
            let result = try context.muteOne(
                &access, uid: uid, reason: reason, durationMs: durationMs, ifNotMuted: ifNotMuted)
            return result.action.map { .changed(seq: $0.seq) } ?? .unchanged
        }
    }

    /// Unmutes up to 100 members (`BulkUnmuteMembers`).
    public func bulkUnmuteMembers(
        _ caller: Caller, guid: String, uids: [String], onlyIfMuted: Bool = false,
        replay: @escaping ReplayEncoder<[String: UserResult]>,
        completion: @escaping @Sendable (MutationResult<[String: UserResult]>) -> Void
    ) {
        submitBulk(caller, guid: guid, uids: uids, toDo: "unmute members", replay: replay, completion: completion) {
            (context: inout WriteContext, access: inout GroupAccess, uid: String) throws(ModerationError) -> UserResult
            in
            let result = try context.unmuteOne(&access, uid: uid, onlyIfMuted: onlyIfMuted)
            return result.action.map { .changed(seq: $0.seq) } ?? .unchanged
        }
    }

    static func validateMute(reason: String, durationMs: Int64) throws(ModerationError) {
        try Validation.text(reason, field: "reason", max: Validation.maxReason)
        try Validation.duration(durationMs, meaningOfZero: "until unmuted")
    }
}
