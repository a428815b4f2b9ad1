import Moderation
import ModerationEvents
import RPCCore
import StoreTestSupport
import Synchronization
import TestSupport
import Testing
import ThreadSupport

/// What the event hub lets subscriptions hold: a cap per app (`ERR_TOO_MANY_SUBSCRIPTIONS`), and
/// their share of the server's memory budget (kind `.subscriptions`), refused when spent
/// (`SubscriptionRefusal.overloaded`) and given back however a subscription ends.
@Suite("Event hub: the cap per app and the memory budget", .onEveryStore)
struct EventHubLimitTests {
    /// A subscriber's stream: sends succeed (or report a full connection once told to), and the
    /// test can close it from outside as a cancel or a lost connection would.
    final class TestSink: EventSink {
        private struct State {
            var onClose: [@Sendable (SinkClosure) -> Void] = []
            var ended: SubscriptionEnd?
            var sent = 0
            var full = false
        }

        private let state = Mutex(State())

        func started(afterSeq: UInt64, headSeq: UInt64) -> EventSendOutcome {
            state.withLock { $0.ended == nil ? .sent : .closed }
        }

        func send(encoded: [UInt8]) -> EventSendOutcome {
            state.withLock { state in
                guard state.ended == nil else { return .closed }
                if state.full { return .overloaded }
                state.sent += 1
                return .sent
            }
        }

        func waitForCapacity(milliseconds: Int) -> Bool { !state.withLock { $0.full } }
        func end(_ reason: SubscriptionEnd) { state.withLock { $0.ended = reason } }
        func onClose(_ handler: @escaping @Sendable (SinkClosure) -> Void) {
            state.withLock { $0.onClose.append(handler) }
        }

        /// The stream goes away from outside (client cancel, connection closed).
        func close() {
            for handler in state.withLock({ $0.onClose }) { handler(.gone) }
        }

        /// From now on the connection holds more than its limit.
        func fill() { state.withLock { $0.full = true } }

        var ended: SubscriptionEnd? { state.withLock { $0.ended } }
        var sent: Int { state.withLock { $0.sent } }
        /// True once the hub has registered what to do when the stream closes.
        var isWatched: Bool { state.withLock { !$0.onClose.isEmpty } }
    }

    /// The subscription's refusal when `startSubscription` refused it at once, else nil.
    static func start(_ hub: EventHub, _ request: SubscriptionRequest, _ sink: TestSink) -> SubscriptionRefusal? {
        let refusal = Mutex<SubscriptionRefusal?>(nil)
        hub.startSubscription(request, sink: sink) { error in refusal.withLock { $0 = error } }
        return refusal.withLock { $0 }
    }

    static func wholeApp(_ app: String = "app", afterSeq: UInt64? = nil) -> SubscriptionRequest {
        SubscriptionRequest(caller: Caller(app: app), target: .app, afterSeq: afterSeq)
    }

    static func harness() throws -> ServiceHarness {
        let harness = try ServiceHarness(clock: ManualWallClock())
        let app = harness.client()
        try app.createUser("owner")
        try app.createGroup("g", owner: "owner")
        return harness
    }

    @Test("past its cap an app's subscriptions are refused with ERR_TOO_MANY_SUBSCRIPTIONS; other apps are not")
    func capPerApp() throws {
        let harness = try Self.harness()
        defer { harness.tearDown() }
        let hub = EventHub(service: harness.service, encode: { _ in [1] }, maxSubscriptionsPerApp: 3)
        defer { hub.shutdown() }
        let sinks = (0..<3).map { _ in TestSink() }
        for sink in sinks { try hub.subscribe(Self.wholeApp(), sink: sink) }
        #expect(hub.subscriptionCount(app: "app") == 3)

        var refused: ModerationError?
        do throws(ModerationError) {
            try hub.subscribe(Self.wholeApp(), sink: TestSink())
        } catch {
            refused = error
        }
        let error = try #require(refused, "a fourth subscription of the app was admitted")
        #expect(error.code == .tooManySubscriptions)
        #expect(error.message.contains("app app") && error.message.contains("3"), "\(error.message)")
        #expect(error.details["max_subscriptions_per_app"] == "3")
        // Refused at once by startSubscription too, before any replay thread is involved.
        #expect(Self.start(hub, Self.wholeApp(), TestSink()) == .rejected(error))

        // Another app has its own cap.
        try hub.subscribe(Self.wholeApp("other"), sink: TestSink())
        #expect(hub.subscriptionCount == 4)

        // An ended subscription frees its place at once.
        sinks[0].close()
        #expect(hub.subscriptionCount(app: "app") == 2)
        try hub.subscribe(Self.wholeApp(), sink: TestSink())
        #expect(hub.subscriptionCount(app: "app") == 3)
    }

    @Test("with the memory budget spent, Subscribe is refused as overloaded, whatever the app")
    func budgetSpent() throws {
        let harness = try Self.harness()
        defer { harness.tearDown() }
        let budget = MemoryBudget(limit: 4_096)
        let hub = EventHub(service: harness.service, encode: { _ in [1] }, memoryBudget: budget)
        defer { hub.shutdown() }
        let first = TestSink()
        #expect(Self.start(hub, Self.wholeApp(), first) == nil)
        #expect(Self.start(hub, Self.wholeApp("other"), TestSink()) == nil)
        #expect(waitUntil { hub.subscriptionCount == 2 })
        #expect(budget.inUse(.subscriptions) >= 2 * 1_024)
        budget.reserve(4_096 - budget.inUse - 100, for: .outbound) // the rest goes to connections

        for app in ["app", "third"] {
            guard case .overloaded(let message)? = Self.start(hub, Self.wholeApp(app), TestSink()) else {
                Issue.record("a subscription of \(app) was admitted over the budget")
                continue
            }
            #expect(message.contains("memory budget"))
        }
        #expect(hub.subscriptionCount == 2, "a refused subscription holds nothing")
        #expect(waitUntil { first.isWatched })
        first.close()
        #expect(Self.start(hub, Self.wholeApp("third"), TestSink()) == nil, "an ended subscription made room")
    }

    @Test("however a subscription ends, it gives back everything it held")
    func everyEndReleases() throws {
        let harness = try Self.harness()
        defer { harness.tearDown() }
        let budget = MemoryBudget(limit: nil)
        let hub = EventHub(service: harness.service, encode: { _ in [1, 2, 3] }, memoryBudget: budget)
        let owner = harness.client("owner")

        // Cut as a slow consumer by the dispatcher.
        let slow = TestSink()
        try hub.subscribe(Self.wholeApp(), sink: slow)
        // Closed from outside.
        let gone = TestSink()
        try hub.subscribe(SubscriptionRequest(caller: Caller(app: "app"), target: .groups(["g"])), sink: gone)
        // Refused after admission: the user does not exist.
        var refused: ModerationError?
        do throws(ModerationError) {
            try hub.subscribe(SubscriptionRequest(caller: Caller(app: "app"), target: .user("ghost")), sink: TestSink())
        } catch {
            refused = error
        }
        #expect(refused?.code == .uidNotFound)
        // Still open at shutdown.
        let open = TestSink()
        try hub.subscribe(SubscriptionRequest(caller: Caller(app: "app"), target: .user("owner")), sink: open)
        hub.settle()
        #expect(hub.subscriptionCount == 3)
        #expect(budget.inUse(.subscriptions) >= 3 * 1_024)

        slow.fill()
        _ = try owner.updateGroup(GroupUpdate(guid: "g", name: "renamed"))
        #expect(waitUntil { slow.ended != nil }, "the slow subscriber was not cut")
        #expect(slow.ended == .slowConsumer(lastSeq: 1), "it was sent nothing after the log's head, seq 1")
        gone.close()
        #expect(hub.subscriptionCount == 1)
        hub.shutdown()
        #expect(open.ended == .shuttingDown(lastSeq: 2), "the owner's subscription had the owner's rename")
        #expect(hub.subscriptionCount == 0)
        #expect(budget.inUse == 0, "\(budget.inUse) bytes still reserved")
    }

    @Test("a replay's buffer of live actions is counted; with no room for more the subscription is cut, not the server")
    func replayBuffer() throws {
        let harness = try Self.harness()
        defer { harness.tearDown() }
        let owner = harness.client("owner")
        // A replay of 4 actions that stalls on a full connection after the first.
        for index in 0..<3 { _ = try owner.updateGroup(GroupUpdate(guid: "g", name: "name \(index)")) }
        let budget = MemoryBudget(limit: 64 * 1_024)
        let hub = EventHub(
            service: harness.service, encode: { _ in [UInt8](repeating: 7, count: 2_000) }, memoryBudget: budget)
        defer { hub.shutdown() }
        let sink = StallingSink()
        let replay = Background { () -> ModerationError? in
            do throws(ModerationError) {
                try hub.subscribe(Self.wholeApp(afterSeq: 0), sink: sink)
                return nil
            } catch {
                return error
            }
        }
        #expect(waitUntil { sink.isWaiting }, "the replay did not reach the full connection")
        let admitted = budget.inUse(.subscriptions)

        // Live actions are buffered meanwhile, each counted.
        _ = try owner.updateGroup(GroupUpdate(guid: "g", name: "live 0"))
        hub.settle()
        let buffered = budget.inUse(.subscriptions) - admitted
        #expect(buffered >= 4_000, "one buffered action of 2 000 encoded bytes counts \(buffered) bytes")
        // Until the budget has no room for one more: the subscription is cut with its last seq.
        for index in 0..<40 where sink.ended == nil {
            _ = try owner.updateGroup(GroupUpdate(guid: "g", name: "live \(index + 1)"))
            hub.settle()
        }
        #expect(sink.ended == .slowConsumer(lastSeq: 1), "\(String(describing: sink.ended))")
        sink.drain.signal()
        #expect(try replay.wait(timeoutMs: 10_000) == nil)
        #expect(hub.subscriptionCount == 0)
        #expect(budget.inUse == 0, "\(budget.inUse) bytes still reserved")
    }

    /// A connection that is full at the second send, until the test drains it.
    final class StallingSink: EventSink {
        private let state = Mutex<(sends: Int, waiting: Bool, ended: SubscriptionEnd?)>((0, false, nil))
        let drain = BlockingSemaphore()

        func started(afterSeq: UInt64, headSeq: UInt64) -> EventSendOutcome {
            state.withLock { $0.ended == nil ? .sent : .closed }
        }

        func send(encoded: [UInt8]) -> EventSendOutcome {
            state.withLock { state in
                guard state.ended == nil else { return .closed }
                state.sends += 1
                return state.sends == 2 ? .overloaded : .sent
            }
        }

        func waitForCapacity(milliseconds: Int) -> Bool {
            state.withLock { $0.waiting = true }
            drain.wait()
            return true
        }

        func end(_ reason: SubscriptionEnd) { state.withLock { $0.ended = reason } }
        func onClose(_ handler: @escaping @Sendable (SinkClosure) -> Void) {}

        var isWaiting: Bool { state.withLock { $0.waiting } }
        var ended: SubscriptionEnd? { state.withLock { $0.ended } }
    }
}
