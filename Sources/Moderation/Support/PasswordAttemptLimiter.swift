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
    ///   - sharedLedger: the store's ledger, when several processes share the store; without one
    ///     the wrong passwords are kept in this process's memory.
    init(limit: Int, windowMs: Int64, sharedLedger: (any PasswordAttemptLedger)?) {
        self.limit = limit
        self.windowMs = windowMs
        ledger = sharedLedger ?? MemoryPasswordAttempts()
    }

    /// The key's wrong passwords in the window at `now` (none when the limiter is off).
    /// - Throws: the ledger's error when it cannot be read (a shared ledger's server is down).
    func failures(_ key: PasswordAttemptKey, now: Int64) throws(ModerationError) -> PasswordFailures {
        guard limit > 0 else { return PasswordFailures(count: 0, first: nil) }
        return try ledger.failures(key, after: now - windowMs)
    }

    /// The key's wrong passwords in the window at `now`, read inside a write: the store's shared
    /// ledger as `transaction` sees it, else the in-memory one.
    func failures(_ key: PasswordAttemptKey, now: Int64, in transaction: any StoreTransaction) throws(ModerationError)
        -> PasswordFailures
    {
        if limit > 0, let shared = try transaction.sharedPasswordFailures(key, after: now - windowMs) { return shared }
        return try failures(key, now: now)
    }

    /// The refusal of a join while the key is over the limit (`retryAfter` gave `waitMs`).
    static func refusal(_ key: PasswordAttemptKey, waitMs: Int64) -> ModerationError {
        ModerationError(
            .rateLimited,
            "too many wrong passwords for group \(key.guid) from \(key.uid); retry after \((waitMs + 999) / 1000) s",
            details: ["retry_after_ms": String(waitMs)])
    }

    /// Milliseconds until the next attempt is allowed, given the key's `failures` at `now`, or
    /// nil when one is allowed now.
    func retryAfter(_ failures: PasswordFailures, now: Int64) -> Int64? {
        guard limit > 0, failures.count >= limit, let first = failures.first else { return nil }
        return max(1, first + windowMs - now)
    }

    /// Records a wrong password, then calls `done`.
    func recordFailure(_ key: PasswordAttemptKey, now: Int64, then done: @escaping @Sendable () -> Void) {
        guard limit > 0 else { return done() }
        ledger.recordFailure(key, at: now, cutoff: now - windowMs, then: done)
    }

    /// A successful join clears the user's record for the group, then calls `done`; `seen` is
    /// what the check before the join found. Nothing is cleared when that was none: clearing
    /// costs a statement on a shared ledger and a hashed lookup in memory, for every join. (A
    /// wrong password recorded in between, by a guess sent at the same moment, then stays until
    /// it is a window old.)
    func recordSuccess(_ key: PasswordAttemptKey, seen: PasswordFailures, then done: @escaping @Sendable () -> Void) {
        guard limit > 0, seen.count > 0 else { return done() }
        ledger.clear(key, then: done)
    }
}
