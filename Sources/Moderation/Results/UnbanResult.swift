/// What `UnbanMember` returns.
public struct UnbanResult: Sendable, Equatable {
    /// False when the user was not banned and `onlyIfBanned` was set.
    public var changed: Bool
    /// The `unbanned` action, when changed.
    public var action: ActionRecord?

    public init(changed: Bool, action: ActionRecord?) {
        self.changed = changed
        self.action = action
    }
}
