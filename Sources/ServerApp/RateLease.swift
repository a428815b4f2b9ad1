/// One app's share of a rate budget leased from a `RateTokenSource`, as a value: what the
/// limiter decides for a call, given the tokens it holds, and what a lease's outcome changes.
/// Times are monotonic nanoseconds. `LeasedRateLimiter` runs it; tests drive it by hand.
///
/// An app seen for the first time starts with an *advance* of one chunk, repaid from the first
/// grants, so its first calls are not refused while the first lease is on its way. A lease is
/// asked for when the tokens left fall to half a chunk (or the advance is owed), one at a time.
/// An empty grant holds further leases back for as long as the shared bucket needs to refill
/// half a chunk. A failed lease (the source unreachable) switches the app to the local fallback
/// until a lease succeeds again, tried once a second.
struct RateLease: Equatable {
    enum Decision: Equatable {
        case admit
        /// Refused; retry after this many milliseconds.
        case refuse(retryAfterMs: Int)
        /// The source is unreachable: the local fallback bucket decides.
        case fallback
    }

    /// Tokens held and not spent yet.
    private(set) var tokens: Int
    /// Of the grants to come, how many repay the advance rather than add tokens.
    private(set) var owed: Int
    /// A lease is queued or under way.
    private(set) var leasing = false
    /// The last lease failed: the fallback decides until one succeeds.
    private(set) var degraded = false
    /// No lease is asked for before this time (after an empty grant or a failure).
    private(set) var nextLeaseAt: UInt64 = 0

    init(advance: Int) {
        tokens = advance
        owed = advance
    }

    /// Decides one call at `now`; `lease` is true when the caller must now ask for a lease of
    /// `chunk` tokens (and report its outcome with `granted` or `failed`).
    mutating func admit(now: UInt64, chunk: Int, rate: Double) -> (decision: Decision, lease: Bool) {
        let lease = !leasing && now >= nextLeaseAt && (degraded || owed > 0 || tokens * 2 <= chunk)
        if lease { leasing = true }
        if degraded { return (.fallback, lease) }
        if tokens >= 1 {
            tokens -= 1
            return (.admit, lease)
        }
        let waitNs = nextLeaseAt > now ? nextLeaseAt - now : UInt64(1e9 / rate)
        return (.refuse(retryAfterMs: max(1, Int((Double(waitNs) / 1e6).rounded(.up)))), lease)
    }

    /// A lease granted `count` tokens at `now`.
    mutating func granted(_ count: Int, now: UInt64, chunk: Int, rate: Double) {
        leasing = false
        degraded = false
        let repaid = min(count, owed)
        owed -= repaid
        tokens += count - repaid
        if count == 0 {
            nextLeaseAt = now + UInt64(Double(max(1, chunk / 2)) / rate * 1e9)
        }
    }

    /// A lease failed at `now`: fall back, and try again in a second.
    mutating func failed(now: UInt64) {
        leasing = false
        degraded = true
        nextLeaseAt = now + 1_000_000_000
    }
}
