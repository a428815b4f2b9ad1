/// What `ApproveJoinRequest` and `RejectJoinRequest` return: the action recorded and the group
/// after it, as the acting admin or moderator sees it.
public struct JoinRequestResult: Sendable, Equatable {
    public var action: ActionRecord
    public var group: GroupView

    public init(action: ActionRecord, group: GroupView) {
        self.action = action
        self.group = group
    }
}
