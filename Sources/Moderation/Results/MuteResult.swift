/// What `MuteMember` returns.
public struct MuteResult: Sendable, Equatable {
    /// False when the member was already muted and `ifNotMuted` was set.
    public var changed: Bool
    /// The `muted` action, when changed.
    public var action: ActionRecord?
    /// The member with the mute in effect.
    public var member: Member

    public init(changed: Bool, action: ActionRecord?, member: Member) {
        self.changed = changed
        self.action = action
        self.member = member
    }
}
