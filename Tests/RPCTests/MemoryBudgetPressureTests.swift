import RPCCore
import Testing

/// How the transport reads the budget: the soft limit and its reserve, the output a connection
/// may hold, and a connection's account settled against what it holds.
@Suite("MemoryBudget: pressure, allowance, accounts")
struct MemoryBudgetPressureTests {
    static let perConnection = 8 << 20

    @Test("without a limit: no pressure, never spent, the connection's own limit")
    func unlimited() {
        let budget = MemoryBudget.unlimited()
        budget.reserve(1 << 40, for: .outbound)
        #expect(!budget.isUnderPressure && !budget.isSpent)
        #expect(budget.outputAllowance(holding: 0, perConnection: Self.perConnection) == Self.perConnection)
    }

    @Test("the reserve is an eighth of the limit, at most 64 MiB")
    func reserve() {
        #expect(MemoryBudget(limit: 64 << 20).reserve == 8 << 20)
        #expect(MemoryBudget(limit: 4 << 30).reserve == 64 << 20)
        #expect(MemoryBudget(limit: 64 << 20).softLimit == 56 << 20)
    }

    @Test(
        "the output allowance: the room left under the soft limit, a small holding under pressure, nothing when spent",
        arguments: [
            // (reserved elsewhere, held by the connection, allowance)
            (0, 0, 8 << 20),
            (50 << 20, 0, 6 << 20),
            (50 << 20, 1 << 20, 6 << 20), // its own holding does not count against it
            (56 << 20 - 1_000, 0, MemoryBudget.smallHolding),
            (57 << 20, 0, MemoryBudget.smallHolding),
            (65 << 20, 0, 0),
        ] as [(Int, Int, Int)])
    func allowance(elsewhere: Int, held: Int, expected: Int) {
        let budget = MemoryBudget(limit: 64 << 20)
        budget.reserve(elsewhere + held, for: .outbound)
        #expect(budget.outputAllowance(holding: held, perConnection: Self.perConnection) == expected)
    }

    @Test("an account reserves and releases the difference, and releases everything at the end")
    func account() {
        let budget = MemoryBudget(limit: 64 << 20)
        var account = MemoryAccount(budget: budget)
        account.settle(outbound: 5_000)
        account.settle(inbound: 300)
        #expect(budget.inUse(.outbound) == 5_000 && budget.inUse(.inbound) == 300 && account.held == 5_300)
        account.settle(outbound: 1_000)
        #expect(budget.inUse == 1_300)
        account.releaseAll()
        #expect(budget.inUse == 0 && account.held == 0)
    }
}
