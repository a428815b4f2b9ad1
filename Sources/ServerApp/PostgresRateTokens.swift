import ModerationPostgres

/// The per-app rate limit's shared budget in PostgreSQL: a token bucket per app refilled at the
/// configured rate up to the burst (`PostgresStore.leaseRateTokens`).
struct PostgresRateTokens: RateTokenSource {
    let store: PostgresStore
    let rate: Double
    let burst: Double

    func lease(app: String, tokens: Int) throws -> Int {
        try store.leaseRateTokens(app: app, tokens: tokens, rate: rate, burst: burst)
    }
}
