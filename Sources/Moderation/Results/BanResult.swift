/// What `BanMember` returns.
public struct BanResult: Sendable, Equatable {
    /// False when the user was already banned and `ifNotBanned` was set.
    public var changed: Bool
    /// The `banned` action, when changed.
    public var action: ActionRecord?
    /// The ban in effect.
    public var ban: Ban

    public init(changed: Bool, action: ActionRecord?, ban: Ban) {
        self.changed = changed
        self.action = action
        self.ban = ban
    }
}
