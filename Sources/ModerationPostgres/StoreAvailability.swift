internal import Moderation
internal import Synchronization

/// A change in whether PostgreSQL answers the store's connections, for the server's log.
public enum StoreAvailabilityChange: Sendable, Equatable {
    /// A connection could not be made after the last one could: calls fail with
    /// `ERR_STORE_UNAVAILABLE` until one can. `reason` is libpq's (the URL's password never in it).
    case unavailable(reason: String)
    /// A connection was made again, `outageSeconds` after the first that could not be.
    case available(outageSeconds: Double)
}

/// Whether PostgreSQL answers, as the store's connection attempts find it: the first attempt that
/// fails after one that succeeded makes it unavailable, the first that succeeds after failures
/// available again. Each change is told to the observer once, on the thread that saw it.
///
/// Connection attempts, not calls, decide: the commit watcher tries every 2 s at most while
/// PostgreSQL is away, so a change is seen with no traffic at all, and a failed call that is
/// not about reaching PostgreSQL (a constraint, a timeout) changes nothing.
final class StoreAvailability: Sendable {
    private let observer: @Sendable (StoreAvailabilityChange) -> Void
    /// When the outage began (monotonic seconds); nil while PostgreSQL answers.
    private let outageStart = Mutex<Double?>(nil)

    init(observer: @escaping @Sendable (StoreAvailabilityChange) -> Void) {
        self.observer = observer
    }

    /// False from a failed connection attempt until one succeeds.
    var isAvailable: Bool { outageStart.withLock { $0 == nil } }

    /// A connection was made.
    func connected() {
        let now = monotonicSeconds()
        let ended = outageStart.withLock { start -> Double? in
            defer { start = nil }
            return start
        }
        if let ended { observer(.available(outageSeconds: now - ended)) }
    }

    /// A connection could not be made (`error` says why).
    func failed(_ error: ModerationError) {
        let now = monotonicSeconds()
        let began = outageStart.withLock { start -> Bool in
            guard start == nil else { return false }
            start = now
            return true
        }
        if began { observer(.unavailable(reason: error.message)) }
    }
}
