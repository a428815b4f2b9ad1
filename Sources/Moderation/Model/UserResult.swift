/// The outcome of one user's part in an operation on many users (bulk kick/ban/unban, add
/// members, the initial members and bans of a new group).
public struct UserResult: Sendable, Equatable {
    /// True when the operation succeeded for this user.
    public var ok: Bool
    /// True when it changed something (false for an "already in that state" success under
    /// `ifNotBanned` / `onlyIfBanned`).
    public var changed: Bool
    /// Why it failed, when `ok` is false.
    public var error: ModerationError?
    /// Seq of the action recorded for this user, when changed; else 0.
    public var seq: UInt64

    public init(ok: Bool, changed: Bool, error: ModerationError? = nil, seq: UInt64 = 0) {
        self.ok = ok
        self.changed = changed
        self.error = error
        self.seq = seq
    }

    static func changed(seq: UInt64) -> UserResult { UserResult(ok: true, changed: true, seq: seq) }
    static let unchanged = UserResult(ok: true, changed: false)
    static func failed(_ error: ModerationError) -> UserResult { UserResult(ok: false, changed: false, error: error) }
}
