/// A position in a list of invites, sorted by (invitedAt descending, id): `id` is the invitee's
/// uid in a group's list and the group's guid in a user's own list.
public struct InviteKey: Sendable, Equatable {
    public var invitedAt: Int64
    public var id: String

    public init(invitedAt: Int64, id: String) {
        self.invitedAt = invitedAt
        self.id = id
    }
}
