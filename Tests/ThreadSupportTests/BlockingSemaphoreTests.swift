import Testing
import ThreadSupport

/// The counting semaphore: signals are counted, a wait takes one, a timed wait gives up.
@Suite("BlockingSemaphore")
struct BlockingSemaphoreTests {
    @Test("The initial count and signals are taken one wait each; then a timed wait times out")
    func counts() {
        let semaphore = BlockingSemaphore(value: 2)
        semaphore.signal()
        for _ in 0..<3 { #expect(semaphore.wait(milliseconds: 0)) }
        let clock = ContinuousClock()
        let start = clock.now
        #expect(!semaphore.wait(milliseconds: 30))
        #expect(clock.now - start >= .milliseconds(25))
    }

    @Test("A waiter wakes when another thread signals")
    func wakesWaiter() {
        let request = BlockingSemaphore()
        let reply = BlockingSemaphore()
        let thread = WorkerThread(name: "ts-signal") {
            request.wait()
            reply.signal()
        }
        request.signal()
        #expect(reply.wait(milliseconds: 10_000))
        thread.join()
    }
}
