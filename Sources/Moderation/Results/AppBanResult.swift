/// What `BanUserFromApp` returns.
public struct AppBanResult: Sendable, Equatable {
    /// The `appBanned` action.
    public var action: ActionRecord
    /// The ban in effect.
    public var ban: AppBan
}
