/// One question of `CheckPost`: may the user `uid` post in the group `guid` now?
public struct PostCheck: Sendable, Equatable, Hashable {
    public var guid: String
    /// Empty means the acting user.
    public var uid: String

    public init(guid: String, uid: String = "") {
        self.guid = guid
        self.uid = uid
    }
}
