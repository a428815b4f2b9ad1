import RPCCore
import Synchronization

/// What the hub's subscriptions may hold: at most `maxPerApp` open at once per app, and their
/// bytes counted against the server's memory budget (kind `.subscriptions`).
///
/// A subscription takes its place (`admit`) before it starts and gives it back, with every byte
/// it reserved, when it ends (`release`); each costs one short lock and a few atomics.
final class SubscriptionQuota: Sendable {
    let maxPerApp: Int
    let budget: MemoryBudget
    private let open = Mutex<[String: Int]>([:])
    private let total = Atomic<Int>(0)

    /// Why `admit` refused.
    enum Refusal: Error {
        /// The app has `maxPerApp` subscriptions open.
        case tooMany
        /// The memory budget has no room for the subscription.
        case overBudget
    }

    init(maxPerApp: Int, budget: MemoryBudget) {
        precondition(maxPerApp > 0, "a cap of subscriptions per app is at least 1")
        self.maxPerApp = maxPerApp
        self.budget = budget
    }

    /// Subscriptions open now, of every app.
    var openCount: Int { total.load(ordering: .relaxed) }

    /// Subscriptions of `app` open now.
    func openCount(app: String) -> Int { open.withLock { $0[app] ?? 0 } }

    /// Takes a place for one more subscription of `app`, with `bytes` of the budget; `force`
    /// reserves the bytes whatever the budget says (the cap still holds).
    func admit(app: String, bytes: Int, force: Bool) throws(Refusal) {
        let placed = open.withLock { open in
            let count = open[app] ?? 0
            guard count < maxPerApp else { return false }
            open[app] = count + 1
            return true
        }
        guard placed else { throw .tooMany }
        if force {
            budget.reserve(bytes, for: .subscriptions)
        } else if !budget.tryReserve(bytes, for: .subscriptions) {
            leave(app)
            throw .overBudget
        }
        total.add(1, ordering: .relaxed)
    }

    /// Gives back a place of `app` and `bytes` of the budget (everything the subscription held).
    func release(app: String, bytes: Int) {
        budget.release(bytes, for: .subscriptions)
        leave(app)
        total.subtract(1, ordering: .relaxed)
    }

    /// Reserves `bytes` more for an admitted subscription; false when the budget has no room.
    func hold(_ bytes: Int) -> Bool { budget.tryReserve(bytes, for: .subscriptions) }

    /// Reserves `bytes` more for an admitted subscription, whatever the budget says.
    func holdAnyway(_ bytes: Int) { budget.reserve(bytes, for: .subscriptions) }

    /// Gives back `bytes` an admitted subscription held and holds no more.
    func letGo(_ bytes: Int) { budget.release(bytes, for: .subscriptions) }

    private func leave(_ app: String) {
        open.withLock { open in
            let count = (open[app] ?? 1) - 1
            open[app] = count > 0 ? count : nil
        }
    }
}
