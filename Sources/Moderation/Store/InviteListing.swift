/// One of a user's invites as the store reads it for `ListMyInvites`: the group and the invite.
public struct InviteListing: Sendable {
    public var group: StoredGroup
    public var invite: Invite

    public init(group: StoredGroup, invite: Invite) {
        self.group = group
        self.invite = invite
    }
}
