import Moderation
import ModerationEvents
import StoreTestSupport
import Synchronization
import TestSupport
import Testing
import ThreadSupport

/// A replay reads the log a page at a time, each page in a snapshot of its own (so a replay
/// waiting for a slow subscriber holds no snapshot): the pages must join up, and actions that
/// retention drops before they were sent must end the replay, never be skipped.
@Suite("Event replay across snapshots", .onEveryStore)
struct ReplayTests {
    /// A subscriber's connection that is full at the first action until the test lets it drain.
    final class GatedSink: EventSink {
        private let state = Mutex<(sends: Int, seqs: [UInt64], waiting: Bool, started: (UInt64, UInt64)?)>(
            (0, [], false, nil))
        let drain = BlockingSemaphore()

        func started(afterSeq: UInt64, headSeq: UInt64) -> EventSendOutcome {
            state.withLock { state in
                precondition(state.started == nil && state.sends == 0, "the started message comes first, once")
                state.started = (afterSeq, headSeq)
            }
            return .sent
        }

        func send(encoded: [UInt8]) -> EventSendOutcome {
            state.withLock { state in
                state.sends += 1
                if state.sends == 1 { return .overloaded }
                state.seqs.append(UInt64(String(decoding: encoded, as: UTF8.self)) ?? 0)
                return .sent
            }
        }

        func waitForCapacity(milliseconds: Int) -> Bool {
            state.withLock { $0.waiting = true }
            drain.wait()
            return true
        }

        func end(_ reason: SubscriptionEnd) {}
        func onClose(_ handler: @escaping @Sendable (SinkClosure) -> Void) {}

        var isWaiting: Bool { state.withLock { $0.waiting } }
        /// The started message's (after_seq, head_seq), once sent.
        var startedAt: (afterSeq: UInt64, headSeq: UInt64)? { state.withLock { $0.started } }
        /// The seqs sent (the test's encoding is the seq in decimal).
        var seqs: [UInt64] { state.withLock { $0.seqs } }
    }

    /// `count` actions (group "g" renamed again and again) after its creation, with a retention of
    /// one minute on a manual clock.
    static func harness(updates count: Int) throws -> ServiceHarness {
        let configuration = ModerationService.Configuration(passwordHasher: .fastForTests, actionRetentionMs: 60_000)
        let harness = try ServiceHarness(clock: ManualWallClock(ticking: false), configuration: configuration)
        let app = harness.client()
        try app.createUser("o")
        try app.createGroup("g", owner: "o")
        for index in 0..<count { _ = try app.updateGroup(GroupUpdate(guid: "g", name: "name \(index)")) }
        return harness
    }

    /// Starts a whole-app replay from seq 0 on its own thread; returns once it waits for the sink.
    static func stalledReplay(_ harness: ServiceHarness, hub: EventHub, sink: GatedSink) -> Background<ModerationError?>
    {
        let replay = Background { () -> ModerationError? in
            do throws(ModerationError) {
                try hub.subscribe(
                    SubscriptionRequest(caller: Caller(app: "app"), target: .app, afterSeq: 0), sink: sink)
                return nil
            } catch {
                return error
            }
        }
        #expect(waitUntil { sink.isWaiting }, "the replay did not reach the full connection")
        return replay
    }

    @Test("a replay that waited goes on with the next page: every action once, in order")
    func pagesJoinUp() throws {
        let harness = try Self.harness(updates: 1_200) // seqs 1...1 201: three pages of 500
        defer { harness.tearDown() }
        let hub = EventHub(service: harness.service, encode: { action in Array(String(action.seq).utf8) })
        defer { hub.shutdown() }
        let sink = GatedSink()
        let replay = Self.stalledReplay(harness, hub: hub, sink: sink)
        _ = try harness.client().updateGroup(GroupUpdate(guid: "g", name: "after the replay's head")) // 1 202, live
        sink.drain.signal()
        #expect(try replay.wait(timeoutMs: 10_000) == nil)
        #expect(waitUntil { sink.seqs.count >= 1_202 }, "sent \(sink.seqs.count) of 1 202 actions")
        #expect(sink.seqs == Array(1...1_202))
        let started = try #require(sink.startedAt, "the stream's first message says where delivery begins")
        #expect(started.afterSeq == 0 && started.headSeq == 1_201, "resumed after 0, replayed through the head")
    }

    @Test("actions retention drops while a replay waits end it with ERR_CURSOR_EXPIRED, not a gap")
    func retentionDuringReplay() throws {
        let harness = try Self.harness(updates: 700) // seqs 1...701: two pages
        defer { harness.tearDown() }
        let hub = EventHub(service: harness.service, encode: { action in Array(String(action.seq).utf8) })
        defer { hub.shutdown() }
        let sink = GatedSink()
        let replay = Self.stalledReplay(harness, hub: hub, sink: sink)
        harness.clock.advance(by: 60_001)
        _ = try harness.client().updateGroup(GroupUpdate(guid: "g", name: "recent")) // 702, kept
        #expect(try harness.service.runMaintenanceAndWait().prunedActions == 701)
        sink.drain.signal()
        let error = try replay.wait(timeoutMs: 10_000)
        #expect(error?.code == .cursorExpired, "\(String(describing: error))")
        #expect(error?.message.contains("seq 501") == true, "\(String(describing: error))")
        #expect(sink.seqs == Array(1...500), "the first page, read before the pruning, was sent whole")
    }
}
