/// A moderation call's change to one user of a group (kick, ban, unban, mute, unmute), written
/// once for the call on one uid and the bulk call: what it checks of its own arguments (step 1),
/// and its part of the write (steps 5–9) on the actor's access as an admin or moderator.
struct TargetChange<Value: Sendable> {
    /// The action as messages name it ("ban members").
    var toDo: String
    /// The checks of the change's own arguments (a reason, a duration).
    var validate: () throws(ModerationError) -> Void = {}
    /// The change to one uid; the group's counters are saved by the caller.
    var apply: @Sendable (inout WriteContext, inout GroupAccess, String) throws(ModerationError) -> Value
}

/// What a target's change gives a bulk call as that uid's result.
protocol BulkOutcome: Sendable {
    var userResult: UserResult { get }
}

extension ActionRecord: BulkOutcome {
    var userResult: UserResult { .changed(seq: seq) }
}

extension BanResult: BulkOutcome {}
extension MuteResult: BulkOutcome {}
extension LiftResult: BulkOutcome {}

extension TargetChange where Value == ActionRecord {
    /// Kicks the member (`WriteContext.kickOne`).
    static var kick: TargetChange {
        TargetChange(toDo: "kick members") {
            (context: inout WriteContext, access: inout GroupAccess, uid: String) throws(ModerationError)
                -> ActionRecord in
            try context.kickOne(&access, uid: uid)
        }
    }
}

extension TargetChange {
    /// A ban or a mute: its `reason` and `durationMs` checked as step 1 (`meaningOfZero` says
    /// what a duration of 0 is).
    static func sanction(
        _ toDo: String, reason: String, durationMs: Int64, meaningOfZero: String,
        apply: @escaping @Sendable (inout WriteContext, inout GroupAccess, String) throws(ModerationError) -> Value
    ) -> TargetChange {
        TargetChange(
            toDo: toDo,
            validate: { () throws(ModerationError) in
                try Validation.sanction(reason: reason, durationMs: durationMs, meaningOfZero: meaningOfZero)
            }, apply: apply)
    }
}

extension TargetChange where Value == BanResult {
    /// Bans the user (`WriteContext.banOne`).
    static func ban(reason: String, durationMs: Int64, ifNotBanned: Bool) -> TargetChange {
        .sanction("ban members", reason: reason, durationMs: durationMs, meaningOfZero: "permanent") {
            (context: inout WriteContext, access: inout GroupAccess, uid: String) throws(ModerationError) -> BanResult
            in
            try context.banOne(&access, uid: uid, reason: reason, durationMs: durationMs, ifNotBanned: ifNotBanned)
        }
    }
}

extension TargetChange where Value == MuteResult {
    /// Mutes the member (`WriteContext.muteOne`).
    static func mute(reason: String, durationMs: Int64, ifNotMuted: Bool) -> TargetChange {
        .sanction("mute members", reason: reason, durationMs: durationMs, meaningOfZero: "until unmuted") {
            (context: inout WriteContext, access: inout GroupAccess, uid: String) throws(ModerationError) -> MuteResult
            in
            try context.muteOne(&access, uid: uid, reason: reason, durationMs: durationMs, ifNotMuted: ifNotMuted)
        }
    }
}

extension TargetChange where Value == LiftResult {
    /// Lifts the user's ban (`WriteContext.unbanOne`).
    static func unban(onlyIfBanned: Bool) -> TargetChange {
        TargetChange(toDo: "unban members") {
            (context: inout WriteContext, access: inout GroupAccess, uid: String) throws(ModerationError) -> LiftResult
            in
            try context.unbanOne(&access, uid: uid, onlyIfBanned: onlyIfBanned)
        }
    }

    /// Lifts the member's mute (`WriteContext.unmuteOne`).
    static func unmute(onlyIfMuted: Bool) -> TargetChange {
        TargetChange(toDo: "unmute members") {
            (context: inout WriteContext, access: inout GroupAccess, uid: String) throws(ModerationError) -> LiftResult
            in
            try context.unmuteOne(&access, uid: uid, onlyIfMuted: onlyIfMuted)
        }
    }
}
