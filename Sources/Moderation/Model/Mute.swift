/// A member's mute: they stay a member but may not post (`CheckPost`) until it ends.
///
/// A mute with `expiresAt != 0` ends at `expiresAt` exactly (`isActive(at:)`), whether or not the
/// sweeper has recorded its expiry yet. Leaving, being kicked or banned ends it with the
/// membership it belongs to.
public struct Mute: Sendable, Equatable {
    /// When the mute ends, Unix milliseconds; 0 means until unmuted.
    public var expiresAt: Int64
    /// Reason given (≤ 512 characters); shown to admins, moderators and the app only.
    public var reason: String

    public init(expiresAt: Int64, reason: String = "") {
        self.expiresAt = expiresAt
        self.reason = reason
    }

    /// True while the mute applies: until unmuted, or not yet at its expiry.
    public func isActive(at now: Int64) -> Bool { expiresAt == 0 || expiresAt > now }

    /// The wire's `muted_until`: the expiry, or -1 for a mute until unmuted.
    public var mutedUntil: Int64 { expiresAt == 0 ? Self.untilUnmuted : expiresAt }

    /// `muted_until` of a mute that lasts until it is lifted.
    public static let untilUnmuted: Int64 = -1
}
