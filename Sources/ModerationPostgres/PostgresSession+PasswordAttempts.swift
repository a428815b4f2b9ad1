internal import Moderation

extension PostgresSession {
    /// From the batch's read-ahead when it read the key (`prefetch`), else one query in the
    /// transaction.
    func sharedPasswordFailures(_ key: PasswordAttemptKey, after cutoff: Int64) throws(ModerationError)
        -> PasswordFailures?
    {
        guard let times = prefetchedPasswordFailures[key] else {
            return try PostgresPasswordAttempts.failures(key, after: cutoff, on: connection)
        }
        let recent = times.lazy.filter { $0 > cutoff }
        return PasswordFailures(count: recent.count, first: recent.first)
    }
}
