import ModerationMessages
import ProtoBridge
import RPCCore
import RPCMessages
import ServerApp
import ServerTestSupport
import StoreTestSupport
import Synchronization
import TestSupport
import Testing

extension EndToEnd {
    /// A subscriber that stops reading is cut off with RESOURCE_EXHAUSTED / ERR_SLOW_CONSUMER and the
    /// last seq it was sent, while writers and other subscribers go on at their pace and the server's
    /// memory stays bounded; it then resumes from that seq without a gap.
    @Suite("Slow subscribers", .onEveryStore)
    struct SlowSubscriberTests {
        static let bulk = (0..<100).map { "bulk-\($0)" }

        /// A writer banning and unbanning `bulk` in group "big" (100 actions a call), timing each call.
        final class BulkWriter: Sendable {
            let client: ModerationWireClient
            private let state = Mutex<(completions: [Int], lastSeq: UInt64, errors: [String])>(([], 0, []))
            private let stopping = Atomic<Bool>(false)
            private let worker = Mutex<Background<Void>?>(nil)

            init(client: ModerationWireClient) { self.client = client }

            func start() {
                let thread = Background { [self] in
                    var ban = true
                    while !stopping.load(ordering: .acquiring) {
                        do {
                            let results =
                                ban
                                ? try client.bulkBan("big", SlowSubscriberTests.bulk)
                                : try client.bulkUnban("big", SlowSubscriberTests.bulk)
                            let seq = results.values.map(\.seq).max() ?? 0
                            state.withLock {
                                $0.completions.append(Clock.nowMs)
                                $0.lastSeq = max($0.lastSeq, seq)
                            }
                        } catch {
                            state.withLock { $0.errors.append("\(error)") }
                            return
                        }
                        ban.toggle()
                    }
                }
                worker.withLock { $0 = thread }
            }

            func stop() throws {
                stopping.store(true, ordering: .releasing)
                try worker.withLock { $0 }?.wait(timeoutMs: 30_000)
            }

            var calls: Int { state.withLock { $0.completions.count } }
            var completions: [Int] { state.withLock { $0.completions } }
            var lastSeq: UInt64 { state.withLock { $0.lastSeq } }
            var errors: [String] { state.withLock { $0.errors } }
        }

        /// A server with the 100 bulk users and group "big" (owned by "owner").
        static func setUp(_ configure: (inout ModerationServer.Tuning) -> Void = { _ in }) throws -> (
            ModerationTestServer, ModerationWireClient, UInt64
        ) {
            let server = try ModerationTestServer(configure: configure)
            let app = try server.client()
            try app.createUser("owner")
            for uid in bulk { try app.createUser(uid, name: "Bulk user \(uid) with a longer display name") }
            try app.createGroup("big", owner: "owner")
            return (server, app, try app.markHead(owner: "owner"))
        }

        /// Writer calls per second between two instants, from completion times.
        static func rate(_ completions: [Int], from start: Int, to end: Int) -> Double {
            let count = completions.filter { $0 > start && $0 <= end }.count
            return Double(count) * 1000 / Double(max(1, end - start))
        }

        @Test("a subscriber that stops reading is cut off with its last seq; others go on; it resumes without a gap")
        func cutOffAndResume() throws {
            let (server, app, start) = try Self.setUp()
            defer { server.tearDown() }
            let fast = app.subscribe(SubscribeRequest(wholeApp: true, start: .afterSeq(start)), keepsMessages: false)
            defer { fast.cancel() }
            #expect(waitUntil { server.subscriptionCount == 1 })
            let writer = BulkWriter(client: try server.client())
            writer.start()
            #expect(waitUntil(timeoutMs: 20_000) { writer.calls >= 10 }, "baseline writes")
            let slowStart = fast.lastSeq
            let baselineEnd = Clock.nowMs

            // The slow subscriber: a raw socket that never reads. (Its receive buffer is left as it
            // is: a small one would keep TCP's window small for good, and the drain below slow.)
            Memory.trim()
            let heapBefore = Memory.heapInUse
            let slow = try server.rawOpen()
            let request = SubscribeRequest(wholeApp: true, start: .afterSeq(slowStart)).serializedBytes()
            try slow.send(Frames.call(streamID: 1, method: ModerationMethods.subscribe.path, body: request))
            #expect(waitUntil { server.subscriptionCount == 2 })
            let cut = waitUntil(timeoutMs: 60_000, pollMs: 10) { server.subscriptionCount == 1 }
            let cutAt = Clock.nowMs
            let heapAtCut = Memory.heapInUse
            let callsAtCut = writer.calls
            #expect(cut, "the slow subscriber was not cut off within 60 s (\(writer.calls) writer calls)")
            #expect(waitUntil(timeoutMs: 20_000) { writer.calls >= callsAtCut + 20 }, "writes go on after the cut")
            let heapAfter = Memory.heapInUse
            try writer.stop()
            #expect(writer.errors.isEmpty, "\(writer.errors)")
            let head = writer.lastSeq

            // The fast subscriber kept up with everything.
            #expect(fast.waitForSeq(head, timeoutMs: 20_000), "the fast subscriber got \(fast.lastSeq) of \(head)")
            #expect(fast.seqs == Array((start + 1)...head), "the fast subscriber got every action once, in order")
            #expect(!fast.hasEnded)

            // What the slow one was sent before the cut, then its trailers.
            var slowSeqs: [UInt64] = []
            var trailers: Status?
            while trailers == nil {
                let frame = try slow.expectFrame(timeoutMs: 10_000)
                guard frame.streamID == 1 else { continue }
                if frame.type == .message {
                    let message = try SubscribeResponse(serializedBytes: frame.payload)
                    guard message.started == nil else { continue } // the stream's first message
                    slowSeqs.append(message.action?.seq ?? 0)
                } else {
                    trailers = try frame.trailers()
                }
            }
            let status = try #require(trailers)
            #expect(
                status.code == StatusCode.resourceExhausted.rawValue && status.errorCode == "ERR_SLOW_CONSUMER",
                "\(status)")
            let lastSeq = try #require(status.details["last_seq"].flatMap(UInt64.init), "details: \(status.details)")
            #expect(lastSeq == (slowSeqs.last ?? slowStart), "last_seq is the last event sent")
            #expect(slowSeqs == Array((slowStart + 1)...lastSeq), "no gap before the cut")

            // Resume from last_seq: the rest, without a gap or duplicate.
            let resumed = app.subscribe(
                SubscribeRequest(wholeApp: true, start: .afterSeq(lastSeq)), keepsMessages: false)
            defer { resumed.cancel() }
            #expect(resumed.waitForSeq(head, timeoutMs: 20_000))
            #expect(slowSeqs + resumed.seqs == Array((slowStart + 1)...head))

            let completions = writer.completions
            let before = Self.rate(completions, from: completions.first ?? 0, to: baselineEnd)
            let during = Self.rate(completions, from: baselineEnd, to: cutAt)
            let gaps = zip(completions.dropFirst(), completions).map { $0 - $1 }
            print(
                """
                slow subscriber: cut after \(cutAt - baselineEnd) ms with \(slowSeqs.count) events sent to it \
                (last_seq \(lastSeq), head then \(head)); writer \(Int(before * 100)) actions/s before, \
                \(Int(during * 100)) actions/s while it was stuck; longest gap between writes \(gaps.max() ?? 0) ms; \
                heap +\((heapAtCut - heapBefore) / 1024) KiB until the cut, \((heapAfter - heapBefore) / 1024) KiB after 20 more writes
                """)
            #expect(
                (gaps.max() ?? 0) < 5_000,
                "a write waited \(gaps.max() ?? 0) ms: writers must never wait for a subscriber")
            #expect(heapAtCut - heapBefore < 32 << 20, "the server's memory grew by \(heapAtCut - heapBefore) bytes")
        }

        @Test("subscribers that do not read while their replay runs hold up no other call")
        func slowReplays() throws {
            // As many workers as the server gets on a 2-core machine by default.
            let (server, app, start) = try Self.setUp { $0.workers = 2 }
            defer { server.tearDown() }
            let writer = BulkWriter(client: try server.client())
            writer.start()
            let enough = waitUntil(timeoutMs: 30_000) { writer.lastSeq >= start + 40_000 }
            try writer.stop()
            #expect(enough, "only \(writer.lastSeq - start) actions in 30 s")
            let head = writer.lastSeq

            // Two subscribers replay the whole log and never read.
            let request = SubscribeRequest(wholeApp: true, start: .afterSeq(0)).serializedBytes()
            let slow = try (0..<2).map { _ in try server.rawOpen() }
            for connection in slow {
                try connection.send(Frames.call(streamID: 1, method: ModerationMethods.subscribe.path, body: request))
            }
            #expect(waitUntil { server.subscriptionCount == 2 })
            // Their replays have filled their connections by now; reads and another replay go on.
            Clock.measure(forMs: 500)
            let other = try server.client("owner")
            var latencies: [Int] = []
            for _ in 0..<5 {
                let began = Clock.nowMs
                _ = try other.getGroup("big")
                latencies.append(Clock.nowMs - began)
            }
            // Nor do they hold a read snapshot while they wait: SQLite can checkpoint its WAL and
            // start it over (a held snapshot would keep it growing with every write). A write
            // before each try, after which the idle pooled readers let go of their snapshots too.
            if case .postgres(let url) = server.backend {
                // On PostgreSQL the same promise reads: no connection sits in a transaction while a
                // replay waits (its snapshot would hold back VACUUM for every table).
                let query = """
                    SELECT count(*) FROM pg_stat_activity
                    WHERE state LIKE 'idle in transaction%' AND now() - state_change > interval '1 second'
                    """
                let released = waitUntil(timeoutMs: 3_000, pollMs: 50) {
                    (try? PostgresCluster.value(query, url: url)) == "0"
                }
                #expect(released, "a stalled replay holds a transaction (and its snapshot) open")
            } else {
                var writes = 0
                let restarted = waitUntil(timeoutMs: 3_000, pollMs: 50) {
                    writes += 1
                    _ = try? app.createUser("after-the-stall-\(writes)")
                    return (try? WALCheckpoint.restartSucceeds(databasePath: server.databasePath)) == true
                }
                #expect(
                    restarted, "a stalled replay holds a read snapshot: the WAL cannot be checkpointed and restarted")
            }

            let began = Clock.nowMs
            let replay = app.subscribe(
                SubscribeRequest(wholeApp: true, start: .afterSeq(head - 100)), keepsMessages: false)
            defer { replay.cancel() }
            #expect(replay.waitForSeq(head, timeoutMs: 20_000))
            let replayMs = Clock.nowMs - began
            print(
                "slow replays: GetGroup took \(latencies) ms, a 100-action replay \(replayMs) ms, while 2 subscribers replaying \(head) actions did not read"
            )
            #expect(latencies.max()! < 2_000 && replayMs < 2_000, "calls waited for the slow subscribers' replays")

            // The first one starts reading within the replay's patience: its replay simply goes on,
            // every action once and in order, and it goes live.
            var seen: UInt64 = 0
            while seen < head {
                let frame = try slow[0].expectFrame(timeoutMs: 10_000)
                guard frame.streamID == 1 else { continue }
                guard frame.type == .message else {
                    throw TestFailure("the reading subscriber was ended: \(try frame.trailers())")
                }
                let message = try SubscribeResponse(serializedBytes: frame.payload)
                guard message.started == nil else { continue } // the stream's first message
                let seq = message.action?.seq ?? 0
                #expect(seq == seen + 1)
                seen = seq
            }
            slow[0].close()
            replay.cancel()

            // The other never reads: once the replay has waited long enough it is ended with
            // ERR_SLOW_CONSUMER and the last seq it was sent.
            #expect(waitUntil(timeoutMs: 30_000, pollMs: 20) { server.subscriptionCount == 0 })
            var last: UInt64 = 0
            var trailers: Status?
            while trailers == nil {
                let frame = try slow[1].expectFrame(timeoutMs: 10_000)
                guard frame.streamID == 1 else { continue }
                if frame.type == .message {
                    let message = try SubscribeResponse(serializedBytes: frame.payload)
                    guard message.started == nil else { continue } // the stream's first message
                    let seq = message.action?.seq ?? 0
                    #expect(seq == last + 1)
                    last = seq
                } else {
                    trailers = try frame.trailers()
                }
            }
            #expect(last < head)
            #expect(
                trailers?.errorCode == "ERR_SLOW_CONSUMER" && trailers?.details["last_seq"] == String(last),
                "\(String(describing: trailers))")
        }
    }
}
