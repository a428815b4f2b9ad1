/// What every call by a user, and CheckPost about them, needs to know of their ban from the app:
/// its expiry and whether it is a shadow ban.
///
/// Plain values only (no strings), like `PostingStanding`: a store keeps one per banned user in
/// memory and answers the per-call check from there, so it must copy like the integers it is.
public struct AppBanStanding: Sendable, Equatable {
    /// When the ban stops applying, Unix milliseconds; 0 until unbanned. Also one past its
    /// expiry that the sweeper has not recorded yet (the rules decide, with `isActive(at:)`).
    public var expiresAt: Int64
    /// True for a shadow ban.
    public var shadow: Bool

    public init(expiresAt: Int64, shadow: Bool) {
        self.expiresAt = expiresAt
        self.shadow = shadow
    }

    /// True while the ban applies: until unbanned, or not yet at its expiry (as `Ban.isActive`).
    public func isActive(at now: Int64) -> Bool { expiresAt == 0 || expiresAt > now }

    /// A ban in force at `now` that is not a shadow ban: the user may make no call.
    public func blocks(at now: Int64) -> Bool { !shadow && isActive(at: now) }
}
