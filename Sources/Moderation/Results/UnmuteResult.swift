/// What `UnmuteMember` returns.
public struct UnmuteResult: Sendable, Equatable {
    /// False when the member was not muted and `onlyIfMuted` was set.
    public var changed: Bool
    /// The `unmuted` action, when changed.
    public var action: ActionRecord?

    public init(changed: Bool, action: ActionRecord?) {
        self.changed = changed
        self.action = action
    }
}
