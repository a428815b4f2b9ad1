internal import Moderation

extension SQLiteSession {
    /// None: one process owns the file, and the service counts wrong passwords in its memory.
    func sharedPasswordFailures(_ key: PasswordAttemptKey, after cutoff: Int64) throws(ModerationError)
        -> PasswordFailures?
    {
        nil
    }
}
