/// What a call that records one action on a group returns with the group after it, as the actor
/// sees it: `JoinGroup` and `AcceptInvite` (as the new member sees it), `TransferOwnership`,
/// `FreezeGroup` and `UnfreezeGroup`, `ApproveJoinRequest` and `RejectJoinRequest`.
public struct GroupActionResult: Sendable, Equatable {
    public var action: ActionRecord
    public var group: GroupView
}
