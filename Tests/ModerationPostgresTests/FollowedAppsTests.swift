import Glibc
import Moderation
import ModerationEvents
import ModerationPostgres
import StoreTestSupport
import Synchronization
import TestSupport
import Testing
import ThreadSupport

/// An instance reads another instance's actions of an app only while it has a subscription of the
/// app (`CommitHandler.follows`): a subscription that starts there while the other instance
/// writes must still be given every action after the head its started message names.
@Suite("PostgreSQL: other instances' actions read only for followed apps")
struct FollowedAppsTests {
    /// A live subscription's stream: its started head and the seqs sent (the test's encoding is
    /// the seq in decimal); closed from outside by the test.
    final class RecordingSink: EventSink {
        private struct State {
            var head: UInt64?
            var seqs: [UInt64] = []
            var onClose: [@Sendable (SinkClosure) -> Void] = []
            var ended: SubscriptionEnd?
        }

        private let state = Mutex(State())

        func started(afterSeq: UInt64, headSeq: UInt64) -> EventSendOutcome {
            state.withLock { $0.head = headSeq }
            return .sent
        }

        func send(encoded: [UInt8]) -> EventSendOutcome {
            state.withLock { $0.seqs.append(UInt64(String(decoding: encoded, as: UTF8.self)) ?? 0) }
            return .sent
        }

        func waitForCapacity(milliseconds: Int) -> Bool { true }
        func end(_ reason: SubscriptionEnd) { state.withLock { $0.ended = reason } }
        func onClose(_ handler: @escaping @Sendable (SinkClosure) -> Void) {
            state.withLock { $0.onClose.append(handler) }
        }

        func close() {
            for handler in state.withLock({ $0.onClose }) { handler(.gone) }
        }

        var head: UInt64? { state.withLock { $0.head } }
        var seqs: [UInt64] { state.withLock { $0.seqs } }
        var ended: SubscriptionEnd? { state.withLock { $0.ended } }
    }

    @Test("subscriptions started and ended on one instance during another's write burst: none misses an action")
    func subscriptionsDuringBurst() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let clock = ManualWallClock()
        let writer = try Instance(url: schema.url, schema: schema.name, clock: clock)
        defer { writer.close() }
        let follower = try Instance(url: schema.url, schema: schema.name, clock: clock, recordsActions: false)
        defer { follower.close() }
        let hub = EventHub(service: follower.service, encode: { action in Array(String(action.seq).utf8) })
        defer { hub.shutdown() }
        try writer.client().createUser("o")
        for guid in ["g0", "g1", "g2"] { try writer.client().createGroup(guid, owner: "o") }
        // Committed while nobody follows the app on the follower: passed over, not read.
        for index in 0..<30 { _ = try writer.client("o").updateGroup(GroupUpdate(guid: "g0", name: "n\(index)")) }
        let quiet = follower.store.statistics.actionsReadForGaps

        let errors = Mutex<[String]>([])
        let writers = (0..<3).map { index in
            WorkerThread(name: "burst-\(index)") {
                for round in 0..<150 {
                    do throws(ModerationError) {
                        _ = try writer.client("o").updateGroup(GroupUpdate(guid: "g\(index)", name: "r\(round)"))
                    } catch {
                        errors.withLock { $0.append("\(error)") }
                    }
                }
            }
        }
        // Subscriptions come and go while the burst runs; between two, nobody follows the app.
        var ended: [RecordingSink] = []
        for _ in 0..<6 {
            let sink = RecordingSink()
            try hub.subscribe(SubscriptionRequest(caller: Caller(app: "app"), target: .app), sink: sink)
            usleep(20_000)
            sink.close()
            ended.append(sink)
            usleep(10_000)
        }
        let last = RecordingSink()
        try hub.subscribe(SubscriptionRequest(caller: Caller(app: "app"), target: .app), sink: last)
        for thread in writers { thread.join() }
        #expect(errors.withLock { $0 }.isEmpty, "\(errors.withLock { $0 })")
        let head = try StoreProbe.bounds(writer.store, app: "app").headSeq
        #expect(waitUntil(timeoutMs: 10_000) { last.seqs.last == head }, "the open subscription got through \(head)")

        #expect(quiet == 0, "the follower read \(quiet) actions of an app nobody followed there")
        for (index, sink) in (ended + [last]).enumerated() {
            let start = try #require(sink.head, "subscription \(index) was not started")
            let seqs = sink.seqs
            // Each got a run without a gap right after its head (ended ones: until they ended).
            #expect(
                seqs == Array((start + 1)..<(start + 1 + UInt64(seqs.count))),
                "subscription \(index) (after \(start)): \(seqs.prefix(8))…")
            #expect(sink.ended == nil)
        }
        #expect(last.seqs.count == Int(head - last.head!), "the last subscription saw every action after its head")
    }
}
