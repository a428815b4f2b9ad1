/// A ban from the whole app: who may not act in the app (or, a shadow ban, whose posts only they
/// see), since when, by whom, why and until when.
///
/// A ban with `expiresAt != 0` stops applying at `expiresAt` exactly (`isActive(at:)`), whether
/// or not the sweeper has recorded its expiry yet, as a group's ban does.
public struct AppBan: Sendable, Equatable {
    public var uid: String
    /// The user's current display name.
    public var name: String
    /// The user's current avatar URL.
    public var avatar: String
    /// When the ban was made, Unix milliseconds.
    public var bannedAt: Int64
    /// UID of who banned the user ("@app": only the app bans from the app).
    public var bannedBy: String
    /// Reason given (≤ 512 characters).
    public var reason: String
    /// When the ban stops applying, Unix milliseconds; 0 means until unbanned.
    public var expiresAt: Int64
    /// True for a shadow ban: the user's calls keep working, and CheckPost marks their posts
    /// `shadowed` instead of refusing them.
    public var shadow: Bool

    public init(
        uid: String, name: String = "", avatar: String = "", bannedAt: Int64, bannedBy: String, reason: String = "",
        expiresAt: Int64 = 0, shadow: Bool = false
    ) {
        self.uid = uid
        self.name = name
        self.avatar = avatar
        self.bannedAt = bannedAt
        self.bannedBy = bannedBy
        self.reason = reason
        self.expiresAt = expiresAt
        self.shadow = shadow
    }

    /// True while the ban applies: until unbanned, or not yet at its expiry.
    public func isActive(at now: Int64) -> Bool { standing.isActive(at: now) }

    /// What the per-call check needs of the ban.
    public var standing: AppBanStanding { AppBanStanding(expiresAt: expiresAt, shadow: shadow) }
}
