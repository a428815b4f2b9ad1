import Moderation
import Testing

@testable import ModerationEvents

/// The event registry's indexes follow subscriptions and memberships, and forget groups and users
/// that no subscription follows any more: a server that sees thousands of groups created and
/// deleted must not keep an index entry for each.
@Suite("Event registry: indexes stay bounded")
struct EventRegistryTests {
    /// A sink that accepts everything and is never closed from outside.
    final class AcceptingSink: EventSink {
        func started(afterSeq: UInt64, headSeq: UInt64) -> EventSendOutcome { .sent }
        func send(encoded: [UInt8]) -> EventSendOutcome { .sent }
        func waitForCapacity(milliseconds: Int) -> Bool { true }
        func end(_ reason: SubscriptionEnd) {}
        func onClose(_ handler: @escaping @Sendable (SinkClosure) -> Void) {}
    }

    static func subscription(_ id: UInt64, _ target: SubscriptionFilter.Target) -> Subscription {
        Subscription(id: id, app: "app", filter: SubscriptionFilter(target: target, kinds: []), sink: AcceptingSink())
    }

    static func action(_ kind: ActionKind, on uid: String, in guid: String) -> ActionRecord {
        ActionRecord(
            app: "app", kind: kind, actionBy: User(uid: "owner"), actionOn: User(uid: uid),
            group: Group(guid: guid, name: guid, type: .public, owner: "owner"), timestamp: 0)
    }

    @Test("Group and user subscriptions leave no index entry behind once removed")
    func removedSubscriptionsLeaveNothing() {
        let registry = Registry()
        var subscriptions: [Subscription] = []
        for id in 0..<200 as Range<UInt64> {
            let subscription =
                id % 2 == 0
                ? Self.subscription(id, .groups(["g\(id)", "shared"]))
                : Self.subscription(id, .user(uid: "u\(id)", memberOf: ["g\(id)", "shared"]))
            registry.addReplaying(subscription)
            if case .user(_, let memberOf) = subscription.followed {
                registry.promote(subscription, memberOf: memberOf)
            } else {
                registry.promote(subscription, memberOf: [])
            }
            subscriptions.append(subscription)
        }
        #expect(registry.indexKeys > 200)
        for subscription in subscriptions { registry.remove(subscription) }
        #expect(registry.indexKeys == 0)
        #expect(registry.count == 0)
    }

    @Test("A user subscription's member-group index forgets groups the user left or that were deleted")
    func trackedGroupsComeAndGo() {
        let registry = Registry()
        let subscription = Self.subscription(1, .user(uid: "u", memberOf: []))
        registry.addReplaying(subscription)
        registry.promote(subscription, memberOf: [])
        subscription.start(at: 0, head: 0)
        subscription.goLive(after: 0)
        var seq: UInt64 = 0
        for index in 0..<1_000 {
            let guid = "temp-\(index)"
            for kind in [ActionKind.joined, .left] {
                seq += 1
                var action = Self.action(kind, on: "u", in: guid)
                action.seq = seq
                _ = subscription.offer(action, encoded: [])
                registry.track(action)
            }
        }
        // Only the user's own entry is left: no empty entry per group the user passed through.
        #expect(registry.indexKeys == 1)
        registry.remove(subscription)
        #expect(registry.indexKeys == 0)
    }

    @Test("Removing a user subscription takes it from its own keys only; the others stay where they are")
    func removalTouchesOnlyItsKeys() {
        let registry = Registry()
        let leaving = Self.subscription(1, .user(uid: "u1", memberOf: ["a", "b", "shared"]))
        let staying = Self.subscription(2, .user(uid: "u2", memberOf: ["b", "shared"]))
        let group = Self.subscription(3, .groups(["a", "shared"]))
        for subscription in [leaving, staying, group] {
            registry.addReplaying(subscription)
            registry.promote(subscription, memberOf: subscription.trackedGroups)
        }
        #expect(registry.indexKeys == 2 + 3 + 2) // users u1, u2; member groups a, b, shared; groups a, shared
        registry.remove(leaving)
        registry.remove(leaving) // twice: nothing more happens
        #expect(registry.count == 2)
        #expect(registry.indexKeys == 1 + 2 + 2) // u2; b, shared; a, shared
        let inShared = Self.action(.updated, on: "nobody", in: "shared")
        #expect(Set(registry.candidates(for: inShared).map(\.id)) == [2, 3])
        let inA = Self.action(.updated, on: "nobody", in: "a")
        #expect(registry.candidates(for: inA).map(\.id) == [3])
    }

    @Test(
        "Removals anywhere in an index leave every other subscription a candidate, once",
        arguments: [
            (count: 1, removed: [0]),
            (count: 5, removed: [4]), // the last: nothing moves
            (count: 5, removed: [0]), // the first: the last takes its place
            (count: 20, removed: [3, 19, 0, 7, 8, 18]),
            (count: 40, removed: Array(stride(from: 0, to: 40, by: 3))),
            (count: 40, removed: Array(0..<39)),
        ])
    func removalsKeepTheRest(count: Int, removed: [Int]) {
        let registry = Registry()
        let subscriptions = (0..<count).map { Self.subscription(UInt64($0), .groups(["g"])) }
        for subscription in subscriptions {
            registry.addReplaying(subscription)
            registry.promote(subscription, memberOf: [])
        }
        for index in removed { registry.remove(subscriptions[index]) }
        let left = Set(0..<count).subtracting(removed).map(UInt64.init)
        let candidates = registry.candidates(for: Self.action(.updated, on: "nobody", in: "g")).map(\.id)
        #expect(candidates.sorted() == left.sorted())
        // And they can still leave: the positions moved by the removals above are right.
        for index in Set(0..<count).subtracting(removed) { registry.remove(subscriptions[index]) }
        #expect(registry.count == 0 && registry.indexKeys == 0)
    }

    @Test("An action reaches a user subscription once, however many of its keys it matches")
    func candidatesOnce() {
        let registry = Registry()
        let user = Self.subscription(1, .user(uid: "u", memberOf: ["g"]))
        let replaying = Self.subscription(2, .app)
        registry.addReplaying(user)
        registry.promote(user, memberOf: ["g"])
        registry.addReplaying(replaying)
        // u is the target, and a member of the action's group.
        let action = Self.action(.kicked, on: "u", in: "g")
        #expect(registry.candidates(for: action).map(\.id).sorted() == [1, 2])
    }

    @Test("A subscription removed before its replay ends is not indexed when the promotion comes")
    func promoteAfterRemove() {
        let registry = Registry()
        let subscription = Self.subscription(1, .groups(["g"]))
        registry.addReplaying(subscription)
        registry.remove(subscription)
        registry.promote(subscription, memberOf: [])
        #expect(registry.count == 0 && registry.indexKeys == 0)
        // Ended while replaying: dropped at its promotion.
        let ended = Self.subscription(2, .groups(["g"]))
        registry.addReplaying(ended)
        ended.abandon()
        registry.promote(ended, memberOf: [])
        #expect(registry.count == 0 && registry.indexKeys == 0)
    }

    /// A sink that remembers how its stream ended.
    final class EndRecordingSink: EventSink, @unchecked Sendable {
        // Only touched on the test's thread.
        var ended: SubscriptionEnd?
        func started(afterSeq: UInt64, headSeq: UInt64) -> EventSendOutcome { .sent }
        func send(encoded: [UInt8]) -> EventSendOutcome { .sent }
        func waitForCapacity(milliseconds: Int) -> Bool { true }
        func end(_ reason: SubscriptionEnd) { ended = reason }
        func onClose(_ handler: @escaping @Sendable (SinkClosure) -> Void) {}
    }

    @Test("A shutdown before a subscription knows where it starts tells it to resume where it asked to start")
    func shutdownBeforeTheStart() {
        let live = EndRecordingSink()
        let resuming = EndRecordingSink()
        let started = EndRecordingSink()
        Subscription(id: 1, app: "app", filter: SubscriptionFilter(target: .app, kinds: []), sink: live)
            .endForShutdown { 7 } // the head now: a live subscription was owed nothing before it
        Subscription(
            id: 2, app: "app", filter: SubscriptionFilter(target: .app, kinds: []), sink: resuming, afterSeq: 3
        )
        .endForShutdown { 3 }
        let running = Subscription(
            id: 3, app: "app", filter: SubscriptionFilter(target: .app, kinds: []), sink: started)
        running.start(at: 5, head: 5)
        running.endForShutdown { 99 } // started: where it stands counts, not the fallback
        #expect(live.ended == .shuttingDown(lastSeq: 7))
        #expect(resuming.ended == .shuttingDown(lastSeq: 3))
        #expect(started.ended == .shuttingDown(lastSeq: 5))
    }
}
