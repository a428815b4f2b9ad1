import Glibc
import ModerationPostgres
import RPCPosix
import StoreTestSupport
import Synchronization
import TestSupport
import Testing
import ThreadSupport

@testable import ServerApp

/// The per-app rate limit on PostgreSQL: instances lease from one bucket per app in the
/// database, so together they admit the configured rate, not the rate once per instance.
@Suite("Rate limit shared by instances on PostgreSQL")
struct SharedRateLimitTests {
    @Test("two instances' admitted calls over 2 s stay within rate × time + burst + the lease slack")
    func twoInstances() throws {
        let url = try PostgresCluster.shared().url
        let schema = PostgresCluster.uniqueSchema("rate")
        defer { PostgresCluster.dropSchema(schema, url: url) }
        let rate = 100.0
        let burst = 100.0
        let stores = try (0..<2).map { _ in
            try PostgresStore(options: PostgresStoreOptions(url: url, schema: schema, writers: 1, readers: 2))
        }
        defer { for store in stores { store.close() } }
        let limiters = stores.map { store in
            LeasedRateLimiter(
                callsPerSecond: rate, burst: burst, source: PostgresRateTokens(store: store, rate: rate, burst: burst))
        }
        defer { for limiter in limiters { limiter.close() } }
        let admitted = Atomic<Int>(0)
        let start = monotonicNow()
        let end = start + 2_000_000_000
        let threads = limiters.enumerated().map { index, limiter in
            WorkerThread(name: "calls-\(index)") {
                while monotonicNow() < end {
                    if limiter.retryAfter(app: "a", now: monotonicNow()) == nil {
                        admitted.wrappingAdd(1, ordering: .relaxed)
                    }
                    usleep(200)
                }
            }
        }
        for thread in threads { thread.join() }
        let seconds = Double(monotonicNow() - start) / 1e9
        let slack = 2 * (limiters[0].chunk * 5 / 2) // per instance: 1.5 chunks held + the advance
        let bound = Int(burst + rate * seconds) + slack
        let total = admitted.load(ordering: .relaxed)
        #expect(total <= bound, "admitted \(total) in \(seconds) s; shared bound \(bound)")
        // Two separate buckets would admit about 2 × (burst + rate × 2 s) = 600.
        #expect(total >= Int(burst + rate * 1.5), "admitted \(total) in \(seconds) s: the shared budget is used")
    }
}
