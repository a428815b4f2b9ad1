import RPCCore
import Testing

/// The per-address throttle of failed handshakes: its buckets, its summaries, and the cap that
/// keeps its table from becoming a memory hole.
@Suite("AuthenticationThrottle: failed handshakes per address, bounded")
struct AuthenticationThrottleTests {
    static let second: UInt64 = 1_000_000_000

    static func configuration(capacity: Int = 4_096) -> AuthenticationThrottle.Configuration {
        var configuration = AuthenticationThrottle.Configuration()
        configuration.burst = 3
        configuration.refillNanoseconds = 10 * second
        configuration.sharedBurst = 100
        configuration.sharedRefillNanoseconds = second
        configuration.summaryNanoseconds = 10 * second
        configuration.capacity = capacity
        return configuration
    }

    @Test("an address gets its burst of lines, then one per refill interval")
    func burstThenRefill() {
        let throttle = AuthenticationThrottle(configuration: Self.configuration())
        let start = 100 * Self.second
        let logged = (0..<10).map { throttle.failed(address: "a", now: start + UInt64($0)) }
        #expect(logged == [true, true, true] + [Bool](repeating: false, count: 7))
        #expect(!throttle.failed(address: "a", now: start + 9 * Self.second))
        #expect(throttle.failed(address: "a", now: start + 10 * Self.second))
        #expect(!throttle.failed(address: "a", now: start + 10 * Self.second + 1))
        #expect(throttle.failed(address: "b", now: start), "another address has its own bucket")
    }

    @Test("the bucket shared by every address bounds the lines of a spray from many addresses")
    func sharedBucket() {
        var configuration = Self.configuration()
        configuration.sharedBurst = 20
        let throttle = AuthenticationThrottle(configuration: configuration)
        let logged = (0..<1_000).filter { throttle.failed(address: "10.0.\($0 / 256).\($0 % 256)", now: Self.second) }
        #expect(logged.count == 20)
    }

    @Test("summaries: once per interval per address, with the count not logged; then the address is forgotten")
    func summaries() {
        let throttle = AuthenticationThrottle(configuration: Self.configuration())
        let start = 100 * Self.second
        for offset in 0..<53 { _ = throttle.failed(address: "a", now: start + UInt64(offset)) }
        #expect(throttle.summaries(now: start + Self.second).isEmpty, "not before the interval")
        let first = throttle.summaries(now: start + 10 * Self.second)
        #expect(first.addresses == [AuthenticationThrottle.Summary(address: "a", refused: 50)])
        #expect(throttle.summaries(now: start + 11 * Self.second).isEmpty, "reported once")
        // Its bucket full again and nothing to report: the table lets it go.
        _ = throttle.summaries(now: start + 60 * Self.second)
        #expect(throttle.trackedAddresses == 0)
    }

    @Test("the table never holds more than its capacity; what evicted addresses did not report is still counted")
    func capacity() {
        let throttle = AuthenticationThrottle(configuration: Self.configuration(capacity: 100))
        for index in 0..<10_000 {
            let address = "192.168.\(index / 256 % 256).\(index % 256)"
            for _ in 0..<5 { _ = throttle.failed(address: address, now: Self.second) }
            #expect(throttle.trackedAddresses <= 100)
        }
        let report = throttle.summaries(now: 20 * Self.second)
        let refused = report.addresses.reduce(0) { $0 + $1.refused } + report.otherRefused
        #expect(refused == 10_000 * 5 - 100, "every failure but the shared burst of lines is reported")
        #expect(report.addresses.count <= Self.configuration().summariesPerRound)
    }

    @Test("LogSummary: the first occurrence at once, then one line per interval with the count since")
    func logSummary() {
        let summary = LogSummary(intervalNanoseconds: 10 * Self.second)
        let start = 100 * Self.second
        #expect(summary.record(now: start) == 1)
        for offset in 1...999 { #expect(summary.record(now: start + UInt64(offset)) == nil) }
        #expect(summary.record(now: start + 10 * Self.second) == 1_000)
        #expect(summary.record(now: start + 11 * Self.second) == nil)
    }
}
