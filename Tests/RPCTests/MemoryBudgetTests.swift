import RPCCore
import Testing
import ThreadSupport

/// `MemoryBudget`: reservations never pass the limit, forced ones count, releases give back.
@Suite("Memory budget")
struct MemoryBudgetTests {
    @Test("tryReserve refuses what would pass the limit and reserves nothing then")
    func refusesPastLimit() {
        let budget = MemoryBudget(limit: 100)
        #expect(budget.tryReserve(60, for: .outbound))
        #expect(!budget.tryReserve(41, for: .inbound))
        #expect(budget.inUse == 60)
        #expect(budget.inUse(.inbound) == 0)
        #expect(budget.tryReserve(40, for: .inbound))
        #expect(budget.isExhausted(adding: 1))
        #expect(!budget.tryReserve(1, for: .compression))
    }

    @Test("a forced reservation counts past the limit; releases bring the budget back")
    func forcedAndReleased() {
        let budget = MemoryBudget(limit: 100)
        budget.reserve(150, for: .outbound)
        #expect(budget.inUse == 150)
        #expect(budget.isExhausted())
        #expect(!budget.tryReserve(0, for: .subscriptions))
        budget.release(100, for: .outbound)
        #expect(budget.inUse(.outbound) == 50)
        #expect(budget.tryReserve(50, for: .subscriptions))
        #expect(budget.inUse(.subscriptions) == 50)
    }

    @Test("without a limit every reservation succeeds and is still counted")
    func unlimited() {
        let budget = MemoryBudget.unlimited()
        #expect(budget.tryReserve(Int.max / 2, for: .compression))
        #expect(budget.inUse(.compression) == Int.max / 2)
        budget.release(Int.max / 2, for: .compression)
        #expect(budget.inUse == 0)
    }

    @Test("threads racing for the last bytes never reserve past the limit together")
    func racing() {
        let budget = MemoryBudget(limit: 10_000)
        let granted = ConditionLock(0)
        let threads = (0..<4).map { index in
            WorkerThread(name: "budget-\(index)") {
                var mine = 0
                for _ in 0..<10_000 where budget.tryReserve(1, for: .outbound) { mine += 1 }
                granted.withLock { $0 += mine }
            }
        }
        for thread in threads { thread.join() }
        #expect(granted.withLock { $0 } == 10_000)
        #expect(budget.inUse == 10_000)
    }
}
