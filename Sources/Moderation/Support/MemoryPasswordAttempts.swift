import Synchronization

/// The wrong passwords of one process, in memory: the ledger of a store no other process writes
/// (SQLite). A restart forgets them, which only restarts the window.
final class MemoryPasswordAttempts: PasswordAttemptLedger {
    private let attempts = Mutex<[PasswordAttemptKey: [Int64]]>([:])
    /// Past this many keys, recording also forgets every key with no failure left in its window.
    private let sweepAbove: Int

    init(sweepAbove: Int = 100_000) {
        self.sweepAbove = sweepAbove
    }

    func failures(_ key: PasswordAttemptKey, after cutoff: Int64) throws(ModerationError) -> PasswordFailures {
        attempts.withLock { attempts in
            // Most joins meet an empty ledger: no key to hash.
            guard !attempts.isEmpty, var times = attempts[key] else { return PasswordFailures(count: 0, first: nil) }
            times.removeAll { $0 <= cutoff }
            attempts[key] = times.isEmpty ? nil : times
            return PasswordFailures(count: times.count, first: times.first)
        }
    }

    func recordFailure(
        _ key: PasswordAttemptKey, at time: Int64, cutoff: Int64, then done: @escaping @Sendable () -> Void
    ) {
        let sweepAbove = sweepAbove
        attempts.withLock { attempts in
            attempts[key, default: []].append(time)
            if attempts.count > sweepAbove {
                attempts = attempts.filter { $0.value.contains { $0 > cutoff } }
            }
        }
        done()
    }

    func clear(_ key: PasswordAttemptKey, then done: @escaping @Sendable () -> Void) {
        _ = attempts.withLock { $0.removeValue(forKey: key) }
        done()
    }
}
