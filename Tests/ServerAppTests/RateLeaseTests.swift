import Glibc
import RPCCore
import RPCPosix
import Synchronization
import Testing
import ThreadSupport

@testable import ServerApp

/// The leased rate limit's logic (`RateLease`), step by step, and `LeasedRateLimiter` over fake
/// sources: what is admitted never exceeds what was leased plus the first advance.
@Suite("Rate limit: leases from a shared budget")
struct RateLeaseTests {
    enum Step: Sendable, CustomStringConvertible {
        /// A call at this millisecond: the decision, and whether it asks for a lease.
        case call(Int, RateLease.Decision, lease: Bool)
        case grant(Int, atMs: Int)
        case fail(atMs: Int)

        var description: String {
            switch self {
            case .call(let ms, let decision, let lease): "call at \(ms) ms → \(decision), lease \(lease)"
            case .grant(let count, let ms): "grant \(count) at \(ms) ms"
            case .fail(let ms): "lease fails at \(ms) ms"
            }
        }
    }

    struct Scenario: Sendable, CustomTestStringConvertible {
        let name: String
        let steps: [Step]
        var testDescription: String { name }
    }

    static let chunk = 4
    static let rate = 80.0 // one token per 12.5 ms: a refusal says retry after 13 ms

    static let scenarios = [
        Scenario(
            name: "the first calls spend the advance; grants repay it, then refill; a lease at half a chunk",
            steps: [
                .call(0, .admit, lease: true), .call(1, .admit, lease: false), .grant(4, atMs: 2),
                .call(3, .admit, lease: true), .call(4, .admit, lease: false),
                .call(5, .refuse(retryAfterMs: 13), lease: false), .grant(4, atMs: 6),
                .call(7, .admit, lease: false), .call(8, .admit, lease: false), .call(9, .admit, lease: true),
            ]),
        Scenario(
            name: "an empty grant holds leases back while the shared bucket refills half a chunk",
            steps: [
                .call(0, .admit, lease: true), .grant(0, atMs: 1), .call(2, .admit, lease: false),
                .call(3, .admit, lease: false), .call(4, .admit, lease: false),
                .call(5, .refuse(retryAfterMs: 21), lease: false), .call(26, .refuse(retryAfterMs: 13), lease: true),
                .grant(4, atMs: 27), .call(28, .refuse(retryAfterMs: 13), lease: true), .grant(4, atMs: 29),
                .call(30, .admit, lease: false),
            ]),
        Scenario(
            name: "an unreachable source: the fallback decides until a lease succeeds, tried once a second",
            steps: [
                .call(0, .admit, lease: true), .fail(atMs: 1), .call(2, .fallback, lease: false),
                .call(500, .fallback, lease: false), .call(1001, .fallback, lease: true),
                .call(1002, .fallback, lease: false), .grant(4, atMs: 1003), .call(1004, .admit, lease: false),
            ]),
    ]

    @Test("lease steps", arguments: scenarios)
    func steps(_ scenario: Scenario) {
        var lease = RateLease(advance: Self.chunk)
        for (index, step) in scenario.steps.enumerated() {
            switch step {
            case .call(let ms, let decision, let asks):
                let outcome = lease.admit(now: UInt64(ms) * 1_000_000, chunk: Self.chunk, rate: Self.rate)
                #expect(outcome.decision == decision, "step \(index): \(step)")
                #expect(outcome.lease == asks, "step \(index): \(step)")
            case .grant(let count, let ms):
                lease.granted(count, now: UInt64(ms) * 1_000_000, chunk: Self.chunk, rate: Self.rate)
            case .fail(let ms):
                lease.failed(now: UInt64(ms) * 1_000_000)
            }
        }
    }

    /// A budget that never refills: `total` tokens in all, shared by every limiter given it.
    final class FixedBudget: RateTokenSource {
        private let left: Mutex<Int>
        init(total: Int) { left = Mutex(total) }
        func lease(app: String, tokens: Int) throws -> Int {
            left.withLock { left in
                let granted = min(tokens, left)
                left -= granted
                return granted
            }
        }
    }

    struct Unreachable: RateTokenSource, Error {
        func lease(app: String, tokens: Int) throws -> Int { throw self }
    }

    @Test("two limiters on one budget admit what it holds plus one advance each, not more")
    func sharedBudget() {
        let budget = FixedBudget(total: 50)
        let limiters = (0..<2).map { _ in LeasedRateLimiter(callsPerSecond: 100, burst: 100, source: budget) }
        defer { for limiter in limiters { limiter.close() } }
        let admitted = Atomic<Int>(0)
        let threads = limiters.enumerated().map { index, limiter in
            WorkerThread(name: "calls-\(index)") {
                for _ in 0..<400 {
                    if limiter.retryAfter(app: "a", now: monotonicNow()) == nil {
                        admitted.wrappingAdd(1, ordering: .relaxed)
                    }
                    usleep(500)
                }
            }
        }
        for thread in threads { thread.join() }
        let chunk = limiters[0].chunk
        #expect(admitted.load(ordering: .relaxed) >= 50, "the whole budget was spent")
        #expect(admitted.load(ordering: .relaxed) <= 50 + 2 * chunk, "no more than the budget and the advances")
    }

    @Test("an unreachable source falls back to the local bucket: bounded, never blocking")
    func unreachableFallsBack() {
        let limiter = LeasedRateLimiter(callsPerSecond: 100, burst: 10, source: Unreachable())
        defer { limiter.close() }
        #expect(limiter.retryAfter(app: "a", now: monotonicNow()) == nil, "the advance")
        usleep(50_000) // the lease has failed by now
        var admitted = 0
        for _ in 0..<100 where limiter.retryAfter(app: "a", now: monotonicNow()) == nil { admitted += 1 }
        #expect((10...11).contains(admitted), "the local bucket's burst, \(admitted)")
    }
}
