public import Moderation

extension PostgresStore {
    /// Takes up to `tokens` whole tokens from the app's rate bucket in the database, shared by
    /// every instance: the bucket refills at `rate` per second up to `burst` (a new one starts
    /// full). One statement in autocommit on a reader connection; for a background thread, never
    /// an event loop.
    /// - Returns: the tokens granted, 0 when the bucket is empty.
    /// - Throws: `ERR_STORE_UNAVAILABLE` when PostgreSQL cannot be reached.
    public func leaseRateTokens(app: String, tokens: Int, rate: Double, burst: Double) throws(ModerationError) -> Int {
        try Self.autocommit(readers) { (connection) throws(ModerationError) -> Int in
            let rows = try connection.query(
                .leaseRateTokens, [.text(app), .int(tokens), .text(String(rate)), .text(String(burst))])
            return rows.int(0, 0)
        }
    }
}
