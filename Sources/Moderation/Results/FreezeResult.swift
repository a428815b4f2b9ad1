/// What `FreezeGroup` and `UnfreezeGroup` return: the `frozen` or `unfrozen` action and the group
/// after it, as the actor sees it.
public struct FreezeResult: Sendable, Equatable {
    public var action: ActionRecord
    public var group: GroupView

    public init(action: ActionRecord, group: GroupView) {
        self.action = action
        self.group = group
    }
}
