import RPCCore
import Synchronization

/// What the hub's subscriptions may hold: at most `maxPerApp` open at once per app, and their
/// bytes counted against the server's memory budget (kind `.subscriptions`).
///
/// A subscription takes its place (`admit`) before it starts and gives it back, with every byte
/// it reserved, when it ends (`release`). Each app's count is an atomic the admission carries,
/// so ending a subscription takes no lock: a connection closing with a thousand subscriptions on
/// one loop, while the replay threads abandon the ones still queued, would otherwise contend on
/// one lock per subscription (a priority-inheriting futex in the kernel each time: a fresh
/// connection's Echo waited about a second behind that on PostgreSQL). Only `admit` looks the app
/// up, under a short lock. An app's count stays once made: apps are the API keys' apps, a set
/// the operator configures.
final class SubscriptionQuota: Sendable {
    let maxPerApp: Int
    let budget: MemoryBudget
    private let apps = Mutex<[String: AppCount]>([:])
    private let total = Atomic<Int>(0)

    /// Subscriptions of one app open now.
    final class AppCount: Sendable {
        let open = Atomic<Int>(0)
    }

    /// A subscription's share of the quota: its place under its app's cap and the bytes reserved
    /// when it was admitted. Given back once, with `release`.
    struct Admission: Sendable {
        let quota: SubscriptionQuota
        let reserved: Int
        fileprivate let count: AppCount
    }

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

    /// Subscriptions of `app` open now (admitted and not yet released). Sequentially consistent
    /// with the admission's increment, for `follows`.
    func openCount(app: String) -> Int {
        apps.withLock { $0[app] }?.open.load(ordering: .sequentiallyConsistent) ?? 0
    }

    /// True when `app` has a subscription open: the store's commit handler asks it
    /// (`CommitHandler.follows`) before reading other servers' actions of the app. A subscription
    /// is admitted before it reads the log's head, and the admission's increment and the count's
    /// load are sequentially consistent: so when this says false, the head a subscription
    /// admitted later reads is past every action committed before the question.
    func follows(app: String) -> Bool { openCount(app: app) > 0 }

    /// The apps `follows` is true of now.
    func followedApps() -> Set<String> {
        let counts = apps.withLock { $0 }
        return Set(counts.lazy.filter { $0.value.open.load(ordering: .sequentiallyConsistent) > 0 }.map(\.key))
    }

    /// Takes a place for one more subscription of `app`, with `bytes` of the budget; `force`
    /// reserves the bytes whatever the budget says (the cap still holds).
    func admit(app: String, bytes: Int, force: Bool) throws(Refusal) -> Admission {
        let count = apps.withLock { apps in
            if let count = apps[app] { return count }
            let count = AppCount()
            apps[app] = count
            return count
        }
        var open = count.open.load(ordering: .relaxed)
        while true {
            guard open < maxPerApp else { throw .tooMany }
            // Sequentially consistent, as `follows` reads it: see there.
            let (taken, seen) = count.open.compareExchange(
                expected: open, desired: open + 1, ordering: .sequentiallyConsistent)
            if taken { break }
            open = seen
        }
        if force {
            budget.reserve(bytes, for: .subscriptions)
        } else if !budget.tryReserve(bytes, for: .subscriptions) {
            count.open.subtract(1, ordering: .relaxed)
            throw .overBudget
        }
        total.add(1, ordering: .relaxed)
        return Admission(quota: self, reserved: bytes, count: count)
    }

    /// Gives back `admission`'s place under its app's cap and `bytes` of the budget (everything
    /// the subscription held).
    func release(_ admission: Admission, bytes: Int) {
        budget.release(bytes, for: .subscriptions)
        admission.count.open.subtract(1, ordering: .relaxed)
        total.subtract(1, ordering: .relaxed)
    }

    /// Reserves `bytes` more for an admitted subscription; false when the budget has no room.
    func hold(_ bytes: Int) -> Bool { budget.tryReserve(bytes, for: .subscriptions) }

    /// Reserves `bytes` more for an admitted subscription, whatever the budget says.
    func holdAnyway(_ bytes: Int) { budget.reserve(bytes, for: .subscriptions) }

    /// Gives back `bytes` an admitted subscription held and holds no more.
    func letGo(_ bytes: Int) { budget.release(bytes, for: .subscriptions) }
}
