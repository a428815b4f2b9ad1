/// A user asked into a group by its admins or moderators, with the scope they get on accepting.
///
/// An invite is live until `expiresAt` exactly (`isLive(at:)`): past it, it is "not found" to
/// every call whether or not maintenance has purged its row yet. Accepting, declining, revoking,
/// joining the group any other way, being banned from it or being deleted ends it.
public struct Invite: Sendable, Equatable {
    /// The invited user.
    public var uid: String
    /// The invited user's display name.
    public var name: String
    /// The invited user's avatar URL.
    public var avatar: String
    /// The scope the user gets on accepting.
    public var scope: Scope
    /// Who invited (`User.appUID` for the app); a refreshed invite names the last to invite.
    public var invitedBy: String
    /// When the invite was made or last refreshed, Unix milliseconds.
    public var invitedAt: Int64
    /// When it stops being live, Unix milliseconds.
    public var expiresAt: Int64

    public init(
        uid: String, name: String = "", avatar: String = "", scope: Scope, invitedBy: String, invitedAt: Int64,
        expiresAt: Int64
    ) {
        self.uid = uid
        self.name = name
        self.avatar = avatar
        self.scope = scope
        self.invitedBy = invitedBy
        self.invitedAt = invitedAt
        self.expiresAt = expiresAt
    }

    /// True while the invite may be accepted: before its expiry.
    public func isLive(at now: Int64) -> Bool { expiresAt > now }
}
