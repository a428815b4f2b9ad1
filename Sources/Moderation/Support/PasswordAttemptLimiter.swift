/// The wrong-password rule: after `limit` wrong passwords per (app, group, user) within the
/// window, that user's joins of that group are refused until the first of them is a window old,
/// so a password group cannot be brute-forced through `JoinGroup`.
///
/// The check runs before the (deliberately slow) password hash is verified, so refused attempts
/// cost the server nothing. The wrong passwords are kept in a ledger: the store's when several
/// processes share it (PostgreSQL: then N instances together allow `limit`, not N × `limit`),
/// else in memory.
final class PasswordAttemptLimiter: Sendable {
    private let limit: Int
    private let windowMs: Int64
    private let ledger: any PasswordAttemptLedger

    /// - Parameters:
    ///   - limit: wrong passwords allowed within the window; 0 turns the limiter off.
    ///   - windowMs: the window, in milliseconds.
    ///   - ledger: where the wrong passwords are kept.
    init(limit: Int, windowMs: Int64, ledger: any PasswordAttemptLedger) {
        self.limit = limit
        self.windowMs = windowMs
        self.ledger = ledger
    }

    /// Milliseconds until the next attempt is allowed, or nil when one is allowed now.
    /// - Throws: the ledger's error when it cannot be read (a shared ledger's server is down).
    func retryAfter(_ key: PasswordAttemptKey, now: Int64) throws(ModerationError) -> Int64? {
        guard limit > 0 else { return nil }
        let failures = try ledger.failures(key, after: now - windowMs)
        guard failures.count >= limit, let first = failures.first else { return nil }
        return max(1, first + windowMs - now)
    }

    /// Records a wrong password, then calls `done`.
    func recordFailure(_ key: PasswordAttemptKey, now: Int64, then done: @escaping @Sendable () -> Void) {
        guard limit > 0 else { return done() }
        ledger.recordFailure(key, at: now, cutoff: now - windowMs, then: done)
    }

    /// A successful join clears the user's record for the group, then calls `done`.
    func recordSuccess(_ key: PasswordAttemptKey, then done: @escaping @Sendable () -> Void) {
        guard limit > 0 else { return done() }
        ledger.clear(key, then: done)
    }
}
