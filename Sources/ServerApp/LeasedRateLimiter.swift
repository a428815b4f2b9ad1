import RPCCore
import RPCPosix
import Synchronization
import ThreadSupport

/// The per-app rate limit when several instances share it: each app's calls spend tokens leased
/// in chunks from a shared budget (`RateTokenSource`: a bucket per app in PostgreSQL), so N
/// instances together admit about the configured rate, not N times it.
///
/// The event loop's check is a few operations under one lock (`RateLease`), as for the local
/// bucket; leases run on a thread of the limiter's own, asked for before the chunk in hand runs
/// out, so no call waits for the database. Slack: each instance may hold up to one and a half
/// chunks unspent, plus a first chunk advanced to an app it sees for the first time; over any
/// interval T the instances together admit at most burst + rate × T + N × 2.5 chunks. While the
/// source cannot be reached, each instance falls back to the local bucket (`TokenBucketLimiter`:
/// the rate per instance, N × the rate in all — bounded, and nearly every call then fails fast
/// with the store's error anyway), and leases again once a second until one succeeds.
final class LeasedRateLimiter: RateLimiter {
    private struct Queue: Sendable {
        var apps: [String] = []
        var closed = false
    }

    /// Tokens per lease.
    let chunk: Int
    private let rate: Double
    private let source: any RateTokenSource
    private let fallback: TokenBucketLimiter
    private let clock: @Sendable () -> UInt64
    private let leases = Mutex<[String: RateLease]>([:])
    private let queue = ConditionLock(Queue())
    private let thread = Mutex<WorkerThread?>(nil)

    /// - Parameters:
    ///   - callsPerSecond: the rate all instances together admit per app.
    ///   - burst: the shared bucket's size (and the fallback's).
    ///   - source: the shared budget.
    ///   - clock: monotonic nanoseconds, the clock of `retryAfter`'s `now`.
    init(
        callsPerSecond: Double, burst: Double, source: any RateTokenSource,
        clock: @escaping @Sendable () -> UInt64 = { monotonicNow() }
    ) {
        rate = callsPerSecond
        // A twentieth of a second's worth: a lease every 50 ms per app at full rate.
        chunk = max(1, min(Int(max(1, burst)), Int((callsPerSecond / 20).rounded(.up))))
        self.source = source
        self.clock = clock
        fallback = TokenBucketLimiter(callsPerSecond: callsPerSecond, burst: burst)
        let worker = WorkerThread(name: "rate-leases") { [self] in run() }
        thread.withLock { $0 = worker }
    }

    func retryAfter(app: String, now: UInt64) -> Int? {
        let chunk = chunk
        let rate = rate
        let (decision, lease) = leases.withLock { leases in
            leases[app, default: RateLease(advance: chunk)].admit(now: now, chunk: chunk, rate: rate)
        }
        if lease { enqueue(app) }
        switch decision {
        case .admit: return nil
        case .refuse(let retryAfterMs): return retryAfterMs
        case .fallback: return fallback.retryAfter(app: app, now: now)
        }
    }

    /// Stops the lease thread (the server is closing); apps then keep what they hold.
    func close() {
        queue.withLock { $0.closed = true }
        queue.broadcast()
        let worker = thread.withLock { worker in
            defer { worker = nil }
            return worker
        }
        worker?.join()
    }

    private func enqueue(_ app: String) {
        queue.withLock { $0.apps.append(app) }
        queue.signal()
    }

    private func run() {
        while let apps = queue.withLock(
            when: { !$0.apps.isEmpty || $0.closed },
            { queue -> [String]? in
                defer { queue.apps.removeAll() }
                return queue.closed ? nil : queue.apps
            })
        {
            let chunk = chunk
            let rate = rate
            for app in apps {
                let outcome = Result { try source.lease(app: app, tokens: chunk) }
                let now = clock()
                leases.withLock { leases in
                    switch outcome {
                    case .success(let count): leases[app]?.granted(count, now: now, chunk: chunk, rate: rate)
                    case .failure: leases[app]?.failed(now: now)
                    }
                }
            }
        }
    }
}
