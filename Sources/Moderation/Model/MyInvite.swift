/// One of the acting user's invites (`ListMyInvites`), with the group as the invitee sees it.
public struct MyInvite: Sendable, Equatable {
    public var invite: Invite
    public var group: GroupView
}
