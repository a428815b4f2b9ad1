import RPCPosix
import Synchronization
import TestSupport
import Testing

/// The event loop's cross-thread inbox: `execute` from any thread must always wake the loop.
@Suite("EventLoop: the cross-thread inbox")
struct EventLoopTests {
    final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    @Test("tasks sent from several threads at once all run, with no other event to wake the loop")
    func noLostWakeup() throws {
        let loop = try EventLoop(index: 0)
        loop.start(name: "inbox-test")
        let threads = 4
        let rounds = 3_000
        let counters = (0..<threads).map { _ in Counter() }
        // Each thread sends a task and waits for it before the next: the loop drains its inbox
        // all the time, while the other threads signal it — where a lost wake-up would hide.
        let completed = try Background<Int>.all(threads) { thread in
            for round in 0..<rounds {
                loop.execute { counters[thread].value.add(1, ordering: .relaxed) }
                let ran = waitUntil(timeoutMs: 2_000, pollMs: 0) {
                    counters[thread].value.load(ordering: .relaxed) > round
                }
                if !ran { return round }
            }
            return rounds
        }
        #expect(
            completed == [Int](repeating: rounds, count: threads), "a task waited 2 s for the loop: a wake-up was lost")
        let stopped = Background { loop.stopAndWait() }
        #expect(throws: Never.self) { try stopped.wait(timeoutMs: 5_000) }
    }
}
