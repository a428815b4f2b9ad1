/// Decides whether an app may make another call now.
public protocol RateLimiter: Sendable {
    /// nil when the call may go ahead (and is counted); otherwise the milliseconds after which
    /// it would be allowed.
    func retryAfter(app: String, now: UInt64) -> Int?
}
