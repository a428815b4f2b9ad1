/// A user in a group: the key of their membership or ban, and of what the stores keep of them.
public struct GroupUserKey: Hashable, Sendable {
    public let groupID: Int64
    public let uid: String

    public init(groupID: Int64, uid: String) {
        self.groupID = groupID
        self.uid = uid
    }
}
