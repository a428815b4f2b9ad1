/// What `BanMember` returns.
public struct BanResult: ConditionalChange, Sendable, Equatable {
    /// The `banned` action; nil when the user was already banned and `ifNotBanned` was set.
    public var action: ActionRecord?
    /// The ban in effect.
    public var ban: Ban
}
