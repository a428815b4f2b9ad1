/// What `MuteMember` returns.
public struct MuteResult: ConditionalChange, Sendable, Equatable {
    /// The `muted` action; nil when the member was already muted and `ifNotMuted` was set.
    public var action: ActionRecord?
    /// The member with the mute in effect.
    public var member: Member
}
