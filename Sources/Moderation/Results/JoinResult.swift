/// What `JoinGroup` returns: the group as the new member sees it, and the `joined` action.
public struct JoinResult: Sendable, Equatable {
    public var group: GroupView
    public var action: ActionRecord

    public init(group: GroupView, action: ActionRecord) {
        self.group = group
        self.action = action
    }
}
