/// Where the wrong-password limit keeps each key's recent wrong passwords (Unix milliseconds).
///
/// A store that several server processes share provides one (`ModerationStore.passwordAttempts`),
/// so the limit counts the wrong passwords made through every instance instead of allowing its
/// number once per instance; otherwise the service keeps them in memory (`MemoryPasswordAttempts`).
/// The rule — how many, over how long a window — stays in the domain (`PasswordAttemptLimiter`):
/// a ledger only counts, records and forgets.
///
/// Recording takes a continuation rather than returning: the join's completion runs on the
/// store's completer thread, which must not wait for a server; a ledger on a server records on a
/// thread of its own and calls `done` once the record is stored (or failed), so the reply that
/// follows is sent after the wrong password counts.
public protocol PasswordAttemptLedger: Sendable {
    /// The key's wrong passwords recorded after `cutoff`.
    /// - Throws: the store's error when the ledger cannot be read.
    func failures(_ key: PasswordAttemptKey, after cutoff: Int64) throws(ModerationError) -> PasswordFailures

    /// Records a wrong password made at `time` (the ledger may forget the key's ones at or before
    /// `cutoff`), then calls `done`. A failure to record is dropped: the attempt is not counted.
    func recordFailure(
        _ key: PasswordAttemptKey, at time: Int64, cutoff: Int64, then done: @escaping @Sendable () -> Void)

    /// Forgets the key's wrong passwords (a successful join whose check found some), then calls
    /// `done`.
    func clear(_ key: PasswordAttemptKey, then done: @escaping @Sendable () -> Void)
}
