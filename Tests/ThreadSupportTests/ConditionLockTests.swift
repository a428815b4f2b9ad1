import Synchronization
import Testing
import ThreadSupport

/// The condition lock: it excludes, hands values from thread to thread through a wait, wakes
/// every waiter on a broadcast, and a timed wait gives up at its deadline.
@Suite("ConditionLock")
struct ConditionLockTests {
    @Test("Only one thread at a time runs inside withLock")
    func excludes() {
        let lock = ConditionLock(0)
        let inside = Atomic<Int>(0)
        let overlaps = Atomic<Int>(0)
        let threads = (0..<4).map { index in
            WorkerThread(name: "lock-\(index)") {
                for _ in 0..<10_000 {
                    lock.withLock { count in
                        if inside.add(1, ordering: .relaxed).oldValue != 0 { overlaps.add(1, ordering: .relaxed) }
                        count += 1
                        inside.subtract(1, ordering: .relaxed)
                    }
                }
            }
        }
        for thread in threads { thread.join() }
        #expect(lock.withLock { $0 } == 40_000)
        #expect(overlaps.load(ordering: .relaxed) == 0)
    }

    @Test("A waiter takes every value a signalling thread hands it, in order")
    func waitAndSignalHandOff() {
        let queue = ConditionLock<[Int]>([])
        let producer = WorkerThread(name: "producer") {
            for value in 1...1_000 {
                queue.withLock { $0.append(value) }
                queue.signal()
            }
        }
        var received: [Int] = []
        while received.count < 1_000 {
            received += queue.withLock(when: { !$0.isEmpty }) { values in
                defer { values.removeAll() }
                return values
            }
        }
        producer.join()
        #expect(received == Array(1...1_000))
    }

    @Test("Two threads take turns through the condition")
    func pingPong() {
        let turn = ConditionLock(0)
        let rounds = 500
        let other = WorkerThread(name: "pong") {
            for round in 0..<rounds {
                turn.withLock(when: { $0 == 2 * round + 1 }) { $0 += 1 }
                turn.signal()
            }
        }
        for round in 0..<rounds {
            turn.withLock(when: { $0 == 2 * round }) { $0 += 1 }
            turn.signal()
        }
        other.join()
        #expect(turn.withLock { $0 } == 2 * rounds)
    }

    @Test("A broadcast wakes every waiter")
    func broadcastWakesAll() {
        let gate = ConditionLock(false)
        let passed = Atomic<Int>(0)
        let waiters = (0..<4).map { index in
            WorkerThread(name: "waiter-\(index)") {
                gate.withLock(when: { $0 }) { _ in }
                passed.add(1, ordering: .relaxed)
            }
        }
        gate.withLock { $0 = true }
        gate.broadcast()
        for waiter in waiters { waiter.join() }
        #expect(passed.load(ordering: .relaxed) == 4)
    }

    @Test("A timed wait gives up at its deadline without running its body")
    func timedWaitTimesOut() {
        let flag = ConditionLock(false)
        let clock = ContinuousClock()
        let start = clock.now
        let result = flag.withLock(when: { $0 }, timeout: .milliseconds(50)) { _ in 1 }
        #expect(result == nil)
        #expect(clock.now - start >= .milliseconds(50))
    }

    @Test("A timed wait returns as soon as its condition holds")
    func timedWaitSucceeds() {
        let flag = ConditionLock(false)
        let setter = WorkerThread(name: "setter") {
            flag.withLock { $0 = true }
            flag.signal()
        }
        let clock = ContinuousClock()
        let start = clock.now
        let result = flag.withLock(when: { $0 }, timeout: .seconds(30)) { _ in 1 }
        setter.join()
        #expect(result == 1)
        #expect(clock.now - start < .seconds(30))
    }

    @Test("A timed wait whose condition already holds does not wait, even with no time left")
    func timedWaitReadyAtOnce() {
        let flag = ConditionLock(true)
        #expect(flag.withLock(when: { $0 }, timeout: .zero) { _ in 1 } == 1)
        #expect(flag.withLock(when: { !$0 }, timeout: .milliseconds(-5)) { _ in 1 } == nil)
    }

    @Test("withLock passes its body's typed error through and unlocks")
    func typedThrowsUnlock() {
        struct Refused: Error {}
        let lock = ConditionLock(0)
        #expect(throws: Refused.self) {
            try lock.withLock { (_: inout Int) throws(Refused) in throw Refused() }
        }
        #expect(
            lock.withLock {
                $0 += 1
                return $0
            } == 1)
    }
}
