import Moderation
import StoreTestSupport
import Synchronization
import TestSupport
import Testing
import ThreadSupport

/// The store reports every durable write inside the completion scope the server sets (where it
/// holds its event loops' wake-ups), on either store.
@Suite("Completion scope", .onEveryStore)
struct CompletionScopeTests {
    /// Counts rounds, and whether a write finished inside one.
    private final class Rounds: Sendable {
        let open = Atomic<Int>(0)
        let entered = Atomic<Int>(0)
    }

    /// A write that changes nothing and records whether it finished inside a round.
    private final class ProbeWrite: StoreWrite {
        let rounds: Rounds
        let finishedInside = Mutex<Bool?>(nil)
        let done = BlockingSemaphore()

        init(rounds: Rounds) { self.rounds = rounds }

        func apply(_ transaction: any StoreTransaction) throws(ModerationError) {}

        func finish(_ failure: ModerationError?) {
            finishedInside.withLock { $0 = rounds.open.load(ordering: .acquiring) > 0 }
            done.signal()
        }
    }

    @Test("every write of a round finishes inside the scope; the scope runs each round once")
    func writesFinishInsideTheScope() throws {
        let harness = try ServiceHarness()
        defer { harness.tearDown() }
        let rounds = Rounds()
        harness.store.setCompletionScope { round in
            rounds.entered.add(1, ordering: .relaxed)
            rounds.open.add(1, ordering: .releasing)
            round()
            rounds.open.subtract(1, ordering: .releasing)
        }
        let writes = (0..<64).map { _ in ProbeWrite(rounds: rounds) }
        for write in writes { harness.store.submit(write) }
        for write in writes { write.done.wait() }
        #expect(writes.allSatisfy { $0.finishedInside.withLock { $0 } == true })
        let entered = rounds.entered.load(ordering: .relaxed)
        #expect(entered >= 1 && entered <= writes.count)

        // A service call's reply comes through the same rounds.
        let before = rounds.entered.load(ordering: .relaxed)
        try harness.client().createUser("after-scope")
        #expect(rounds.entered.load(ordering: .relaxed) > before)
    }
}
