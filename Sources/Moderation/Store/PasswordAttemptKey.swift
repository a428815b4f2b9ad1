/// Whose wrong passwords are counted together: one user's joins of one group, in one app.
public struct PasswordAttemptKey: Sendable, Hashable {
    public var app: String
    public var guid: String
    public var uid: String

    public init(app: String, guid: String, uid: String) {
        self.app = app
        self.guid = guid
        self.uid = uid
    }
}
