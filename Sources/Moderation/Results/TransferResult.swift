/// What `TransferOwnership` returns: the `ownershipTransferred` action and the group after it.
public struct TransferResult: Sendable, Equatable {
    public var action: ActionRecord
    public var group: GroupView

    public init(action: ActionRecord, group: GroupView) {
        self.action = action
        self.group = group
    }
}
