/// One question of `CheckPost`: may the user `uid` post `text` in the group `guid` now?
public struct PostCheck: Sendable, Equatable, Hashable {
    public var guid: String
    /// Empty means the acting user.
    public var uid: String
    /// The post (≤ 10 000 bytes), scanned with the content rules when the standing allows
    /// posting; empty scans nothing.
    public var text: String

    public init(guid: String, uid: String = "", text: String = "") {
        self.guid = guid
        self.uid = uid
        self.text = text
    }
}
