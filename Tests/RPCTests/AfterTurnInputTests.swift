import RPCPosix
import Synchronization
import TestSupport
import Testing

/// `EventLoop.afterTurnInput`: work put off on a loop runs in the same turn, after the turn's
/// events (and before its output is written); off a loop it runs at once.
@Suite("EventLoop: work after the turn's input")
struct AfterTurnInputTests {
    final class Log: Sendable {
        private let entries = Mutex<[String]>([])
        func add(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    @Test("on a loop: after the turn's other work, in order, with what it puts off in turn")
    func onLoop() throws {
        let loop = try EventLoop(index: 0)
        loop.start(name: "after-input-test")
        defer { loop.stopAndWait() }
        let log = Log()
        // One task from the inbox stands for a turn's events; the loop runs it as one event.
        loop.execute {
            EventLoop.afterTurnInput {
                log.add("first put off")
                EventLoop.afterTurnInput { log.add("put off by it") }
            }
            EventLoop.afterTurnInput { log.add("second put off") }
            log.add("event")
        }
        #expect(waitUntil(timeoutMs: 2_000) { log.all.count == 4 })
        #expect(log.all == ["event", "first put off", "second put off", "put off by it"])
    }

    @Test("off a loop: at once")
    func offLoop() {
        let log = Log()
        EventLoop.afterTurnInput { log.add("ran") }
        #expect(log.all == ["ran"])
    }
}
