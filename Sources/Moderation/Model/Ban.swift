/// A ban record: who is kept out of a group, since when, by whom, why and until when.
///
/// A ban with `expiresAt != 0` stops applying at `expiresAt` exactly (`isActive(at:)`), whether
/// or not the sweeper has recorded its expiry yet.
public struct Ban: Sendable, Equatable {
    public var uid: String
    public var name: String
    public var avatar: String
    /// The scope the user had before the ban; nil for a pre-emptive ban of a non-member.
    public var scopeBefore: Scope?
    /// When the user originally joined, Unix milliseconds; 0 for a pre-emptive ban.
    public var joinedAt: Int64
    /// When the ban was made, Unix milliseconds.
    public var bannedAt: Int64
    /// UID of who banned the user ("@app" for the app).
    public var bannedBy: String
    /// Reason given (≤ 512 characters).
    public var reason: String
    /// When the ban stops applying, Unix milliseconds; 0 means permanent.
    public var expiresAt: Int64

    public init(
        uid: String, name: String = "", avatar: String = "", scopeBefore: Scope?, joinedAt: Int64,
        bannedAt: Int64, bannedBy: String, reason: String = "", expiresAt: Int64 = 0
    ) {
        self.uid = uid
        self.name = name
        self.avatar = avatar
        self.scopeBefore = scopeBefore
        self.joinedAt = joinedAt
        self.bannedAt = bannedAt
        self.bannedBy = bannedBy
        self.reason = reason
        self.expiresAt = expiresAt
    }

    /// True while the ban applies: permanent, or not yet at its expiry.
    public func isActive(at now: Int64) -> Bool { expiresAt == 0 || expiresAt > now }
}
