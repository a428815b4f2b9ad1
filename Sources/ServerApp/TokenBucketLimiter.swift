import RPCCore
import Synchronization

/// A per-app token bucket: `rate` calls per second on average, bursts up to `burst`.
///
/// Buckets are kept per app behind one lock; the critical section is a few arithmetic
/// operations, so it stays far below a call's own cost.
final class TokenBucketLimiter: RateLimiter {
    private let rate: Double
    private let burst: Double
    private let buckets = Mutex<[String: Bucket]>([:])

    private struct Bucket {
        var tokens: Double
        var updated: UInt64
    }

    init(callsPerSecond: Double, burst: Double) {
        rate = callsPerSecond
        self.burst = max(1, burst)
    }

    func retryAfter(app: String, now: UInt64) -> Int? {
        buckets.withLock { buckets in
            var bucket = buckets[app] ?? Bucket(tokens: burst, updated: now)
            let elapsed = Double(now &- bucket.updated) / 1e9
            bucket.tokens = min(burst, bucket.tokens + elapsed * rate)
            bucket.updated = now
            defer { buckets[app] = bucket }
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                return nil
            }
            return max(1, Int(((1 - bucket.tokens) / rate * 1000).rounded(.up)))
        }
    }
}
