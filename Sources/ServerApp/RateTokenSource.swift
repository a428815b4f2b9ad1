/// Where a `LeasedRateLimiter` gets its tokens: a budget several server instances share (a
/// bucket per app in PostgreSQL), so that together they admit an app's configured rate, not the
/// rate once per instance.
protocol RateTokenSource: Sendable {
    /// Takes up to `tokens` tokens from the app's shared budget; called on the limiter's own
    /// thread, never on an event loop.
    /// - Returns: the tokens granted (0 when the budget is spent for now).
    /// - Throws: when the budget cannot be reached; the limiter then falls back to a local bucket.
    func lease(app: String, tokens: Int) throws -> Int
}
