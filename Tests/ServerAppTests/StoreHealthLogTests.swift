import ModerationPostgres
import RPCCore
import Testing

@testable import ServerApp

/// PostgreSQL's outages in the log: a warning when one begins and a notice with its length when it
/// ends; outages that begin within 10 s of the last warning are counted into the next one.
@Suite("The store's availability in the log")
struct StoreHealthLogTests {
    @Test("one warning and one notice an outage; a flapping store is summarised, not logged per outage")
    func outages() {
        let capture = LogCapture()
        let clock = ManualClock()
        let log = StoreHealthLog(logger: Logger(level: .info, output: capture), clock: { clock.now })

        log.record(.unavailable(reason: "could not connect to server: Connection refused"))
        #expect(capture.lines.count == 1)
        #expect(capture.lines.last?.contains("WARNING the store is unavailable") == true, "\(capture.lines)")
        #expect(capture.lines.last?.contains("Connection refused") == true)
        clock.advance(ms: 2_500)
        log.record(.available(outageSeconds: 2.54))
        #expect(capture.lines.count == 2)
        #expect(
            capture.lines.last?.contains("NOTICE the store is available again outage=\"2.5 s\"") == true,
            "\(capture.lines)")

        // Three more outages within 10 s of the warning: neither their start nor their end is logged.
        for _ in 0..<3 {
            clock.advance(ms: 1_000)
            log.record(.unavailable(reason: "refused"))
            log.record(.available(outageSeconds: 0.1))
        }
        #expect(capture.lines.count == 2, "\(capture.lines)")
        // The next one after the interval is logged, with the count of those in between.
        clock.advance(ms: 10_000)
        log.record(.unavailable(reason: "refused"))
        #expect(capture.lines.count == 3)
        #expect(capture.lines.last?.contains("outages=\"4 since the last warning\"") == true, "\(capture.lines)")
        log.record(.available(outageSeconds: 30))
        #expect(capture.lines.count == 4)
    }
}
