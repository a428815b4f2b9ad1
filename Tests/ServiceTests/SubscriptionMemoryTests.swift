import ModerationMessages
import ProtoBridge
import RPCCore
import ServerTestSupport
import StoreTestSupport
import TestSupport
import Testing

extension EndToEnd {
    /// What subscriptions hold is in the memory budget while they hold it, and only then: a
    /// compressed subscription makes its deflate context on its first event (before it did,
    /// 100 connections × 1 024 compressed subscriptions held 2.3 GB before any event), and a
    /// connection that goes away — closed by its client, or cut by the server — gives back
    /// everything its subscriptions held.
    @Suite("Subscriptions and the memory budget", .onEveryStore)
    struct SubscriptionMemoryTests {
        @Test("compressed subscriptions hold no deflate state before their first event, and give everything back")
        func compressedSubscriptions() throws {
            let server = try ModerationTestServer()
            defer { server.tearDown() }
            let app = try server.client()
            try app.createUser("owner")
            // From the log's start (still empty: creating a user records no action), not "live
            // from now": a live-only stream starts after the log's head when its setup reads it,
            // which on a slower store may come after the event below, and then the event is
            // rightly not its to receive.
            let request = SubscribeRequest(wholeApp: true, start: .afterSeq(0)).serializedBytes()
            let perConnection = 100
            var calls: [UInt8] = []
            for index in 0..<perConnection {
                calls += Frames.call(
                    streamID: UInt32(2 * index + 1), method: ModerationMethods.subscribe.path, body: request,
                    acceptDeflate: true)
            }
            let connections = try (0..<2).map { _ in try server.rawOpen(acceptDeflate: true) }
            for connection in connections { try connection.send(calls) }
            let total = 2 * perConnection
            #expect(waitUntil { server.subscriptionCount == total })
            server.settleEvents()
            let budget = server.memoryBudget
            #expect(
                budget.inUse(.compression) == 0, "\(budget.inUse(.compression)) bytes of deflate state, no event yet")
            #expect(budget.inUse(.subscriptions) >= total * 1_024)

            // One event: each stream compresses it, with a context of its own from now on.
            try app.createGroup("g", owner: "owner")
            let context = ServerStream<SubscribeResponse>.deflaterBytes
            #expect(
                waitUntil { budget.inUse(.compression) == total * context },
                "\(budget.inUse(.compression)) bytes of deflate state for \(total) streams of \(context)")
            // Each stream's first message, `started`, is too small to be worth compressing; the
            // event after them is compressed.
            var frame = try connections[0].expectFrame(.message).frame
            while !frame.header.isCompressed, try SubscribeResponse(serializedBytes: frame.payload).started != nil {
                frame = try connections[0].expectFrame(.message).frame
            }
            #expect(frame.header.isCompressed)

            connections[0].close()
            #expect(waitUntil { server.subscriptionCount == perConnection })
            #expect(waitUntil { budget.inUse(.compression) == perConnection * context })
            connections[1].close()
            #expect(waitUntil { server.subscriptionCount == 0 })
            server.settleEvents()
            #expect(waitUntil { budget.inUse(.compression) == 0 }, "\(budget.inUse(.compression)) bytes still held")
            #expect(budget.inUse(.subscriptions) == 0, "\(budget.inUse(.subscriptions)) bytes still held")
        }
    }
}
