/// A user of one app: the people (or bots) that belong to groups.
public struct User: Sendable, Equatable {
    /// The uid reserved for the app itself in actions ("@app"): it cannot collide with a real
    /// uid, whose characters are `[a-z0-9_-]`.
    public static let appUID = "@app"

    /// The app as an acting user in the action log (uid "@app", name "app").
    public static let app = User(uid: appUID, name: "app")

    /// Unique within the app: 1–100 characters of `[a-z0-9_-]`.
    public var uid: String
    /// Display name (≤ 100 characters).
    public var name: String
    /// Avatar URL (≤ 3000 characters).
    public var avatar: String
    /// Free-form metadata (≤ 5 KB in all).
    public var metadata: [String: String]
    /// Creation time, Unix milliseconds.
    public var createdAt: Int64

    public init(
        uid: String, name: String = "", avatar: String = "", metadata: [String: String] = [:], createdAt: Int64 = 0
    ) {
        self.uid = uid
        self.name = name
        self.avatar = avatar
        self.metadata = metadata
        self.createdAt = createdAt
    }
}
