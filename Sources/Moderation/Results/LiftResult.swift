/// What lifting a ban or a mute returns (`UnbanMember`, `UnmuteMember`).
public struct LiftResult: ConditionalChange, Sendable, Equatable {
    /// The `unbanned` or `unmuted` action; nil when there was nothing in force to lift and
    /// `onlyIfBanned` or `onlyIfMuted` was set.
    public var action: ActionRecord?
}
