import ModerationMessages
import ProtoBridge
import RPCCore
import RPCMessages
import ServerTestSupport
import StoreTestSupport
import TestSupport
import Testing

extension EndToEnd {
    /// One tenant opening and dropping tens of thousands of subscriptions costs the other
    /// connections nothing: starting and ending a subscription only queues a command for the
    /// event hub's dispatcher, whatever the number of subscriptions. (When the registry copied an
    /// app's indexes under the hub's lock on the event loops, Echo from a fresh connection waited
    /// ~36 s while 60 × 1 024 subscriptions closed.)
    @Suite("Many subscriptions closing at once", .onEveryStore)
    struct SubscriptionChurnTests {
        static let connections = 60
        static let perConnection = 1_024
        /// The longest a fresh Echo may take while they close. Far below the ~36 s of a hub that
        /// blocks the event loops, and far above what scheduling costs a debug server on a
        /// 2-core machine busy with other test processes and builds (up to ~3 s seen).
        static let slowestEchoMs = 8_000

        /// Connects, says HELLO as app 2 (another tenant), sends one Echo and waits for its REPLY;
        /// the milliseconds it took, or nil when it failed or took over 30 s.
        static func freshEcho(_ server: ModerationTestServer) -> Int? {
            let began = Clock.nowMs
            do {
                let connection = try server.rawOpen(.two)
                defer { connection.close() }
                let reply = try connection.roundTrip(
                    Frames.echo(streamID: 1, [1, 2, 3]), streamID: 1, timeoutMs: 30_000)
                guard try reply.replyError() == nil else { return nil }
                return Clock.nowMs - began
            } catch {
                return nil
            }
        }

        @Test("a fresh Echo answers while 60 × 1 024 subscriptions close")
        func echoWhileSubscriptionsClose() throws {
            let server = try ModerationTestServer()
            defer { server.tearDown() }
            let request = SubscribeRequest(wholeApp: true).serializedBytes()
            var calls: [UInt8] = []
            for index in 0..<Self.perConnection {
                calls += Frames.call(
                    streamID: UInt32(2 * index + 1), method: ModerationMethods.subscribe.path, body: request)
            }
            var subscribers: [RawConnection] = []
            for _ in 0..<Self.connections {
                let connection = try server.rawOpen()
                try connection.send(calls, timeoutMs: 20_000)
                subscribers.append(connection)
            }
            let total = Self.connections * Self.perConnection
            let opened = waitUntil(timeoutMs: 120_000, pollMs: 20) { server.subscriptionCount == total }
            try #require(opened, "\(server.subscriptionCount) of \(total) subscriptions started")
            let budget = server.memoryBudget
            #expect(budget.inUse(.subscriptions) >= total * 1_024, "each subscription counts its record")

            let began = Clock.nowMs
            for connection in subscribers { connection.close() }
            var latencies: [Int?] = []
            repeat {
                latencies.append(Self.freshEcho(server))
                Clock.measure(forMs: 20)
            } while (server.subscriptionCount > 0 || latencies.count < 5) && Clock.nowMs - began < 60_000
            let goneMs = Clock.nowMs - began
            let slowest = latencies.map { $0 ?? Int.max }.max() ?? 0
            print(
                "\(total) subscriptions closed in \(goneMs) ms; \(latencies.count) fresh Echo calls meanwhile, latencies \(latencies.map { $0.map(String.init) ?? "failed" })"
            )
            #expect(server.subscriptionCount == 0, "\(server.subscriptionCount) subscriptions still open after 60 s")
            #expect(slowest < Self.slowestEchoMs, "a fresh Echo waited for the subscriptions closing: \(latencies)")
            // Everything the subscriptions held is given back, and the dispatcher has dropped them.
            server.settleEvents()
            #expect(budget.inUse(.subscriptions) == 0)
            #expect(budget.inUse(.compression) == 0)
        }
    }
}
