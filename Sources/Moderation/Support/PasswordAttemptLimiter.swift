import Synchronization

/// Counts wrong group passwords per (app, user, group) and refuses further joins for a while
/// after too many, so a password group cannot be brute-forced through `JoinGroup`.
///
/// The check runs before the (deliberately slow) password hash is verified, so refused attempts
/// cost the server nothing. State is in memory: a restart forgets it, which only restarts the
/// window.
final class PasswordAttemptLimiter: Sendable {
    private let limit: Int
    private let windowMs: Int64
    private let attempts = Mutex<[Key: Attempts]>([:])

    private struct Key: Hashable {
        let app: String
        let uid: String
        let guid: String
    }

    private struct Attempts {
        var failures: [Int64] = []
    }

    /// - Parameters:
    ///   - limit: wrong passwords allowed within the window; 0 turns the limiter off.
    ///   - windowMs: the window, in milliseconds.
    init(limit: Int, windowMs: Int64) {
        self.limit = limit
        self.windowMs = windowMs
    }

    /// Milliseconds until the next attempt is allowed, or nil when one is allowed now.
    func retryAfter(app: String, uid: String, guid: String, now: Int64) -> Int64? {
        guard limit > 0 else { return nil }
        return attempts.withLock { attempts in
            guard var entry = attempts[Key(app: app, uid: uid, guid: guid)] else { return nil }
            entry.failures.removeAll { $0 <= now - windowMs }
            attempts[Key(app: app, uid: uid, guid: guid)] = entry.failures.isEmpty ? nil : entry
            guard entry.failures.count >= limit, let oldest = entry.failures.first else { return nil }
            return max(1, oldest + windowMs - now)
        }
    }

    /// Records a wrong password.
    func recordFailure(app: String, uid: String, guid: String, now: Int64) {
        guard limit > 0 else { return }
        attempts.withLock { attempts in
            attempts[Key(app: app, uid: uid, guid: guid), default: Attempts()].failures.append(now)
            if attempts.count > 100_000 {
                attempts = attempts.filter { $0.value.failures.contains { $0 > now - windowMs } }
            }
        }
    }

    /// A successful join clears the user's record for the group.
    func recordSuccess(app: String, uid: String, guid: String) {
        guard limit > 0 else { return }
        _ = attempts.withLock { $0.removeValue(forKey: Key(app: app, uid: uid, guid: guid)) }
    }
}
