import ModerationMessages
import RPCCore
import ServerApp
import ServerTestSupport
import StoreTestSupport
import TestSupport
import Testing

extension EndToEnd {
    /// What one app may make the event hub hold: at most `--max-subscriptions-per-app` open
    /// subscriptions (`ERR_TOO_MANY_SUBSCRIPTIONS`, the app's own limit), and nothing past the
    /// server's memory budget (`ERR_OVERLOADED`, the server's condition). Both are
    /// RESOURCE_EXHAUSTED, and neither touches what is already open.
    @Suite("Subscription limits over the wire", .onEveryStore)
    struct SubscriptionLimitTests {
        @Test("past its cap an app gets RESOURCE_EXHAUSTED ERR_TOO_MANY_SUBSCRIPTIONS naming it and the cap")
        func capPerApp() throws {
            let server = try ModerationTestServer(settings: { $0.maxSubscriptionsPerApp = 2 })
            defer { server.tearDown() }
            let app = try server.client()
            let first = app.subscribe(SubscribeRequest(wholeApp: true))
            let second = app.subscribe(SubscribeRequest(wholeApp: true))
            defer { second.cancel() }
            #expect(waitUntil { server.subscriptionCount == 2 })

            let third = app.subscribe(SubscribeRequest(wholeApp: true))
            let refused = try third.waitForEnd()
            expectFailure(refused, .resourceExhausted, "ERR_TOO_MANY_SUBSCRIPTIONS", mentions: "app app1")
            #expect(refused?.message.contains("2 open subscriptions") == true, "\(String(describing: refused))")
            #expect(refused?.details["max_subscriptions_per_app"] == "2")

            // Another tenant has a cap of its own.
            let other = try server.client(app: .two).subscribe(SubscribeRequest(wholeApp: true))
            defer { other.cancel() }
            #expect(waitUntil { server.subscriptionCount == 3 })
            #expect(!other.hasEnded)

            // A subscription that ends frees its place.
            first.cancel()
            #expect(waitUntil { server.subscriptionCount == 2 })
            let again = app.subscribe(SubscribeRequest(wholeApp: true))
            defer { again.cancel() }
            #expect(waitUntil { server.subscriptionCount == 3 })
            try app.createUser("owner")
            let created = try app.createGroup("g", owner: "owner")
            let seq = created.results.values.map(\.seq).max() ?? 0
            #expect(again.waitForSeq(seq) && second.waitForSeq(seq), "the subscriptions admitted deliver")
        }

        @Test("with the memory budget spent, Subscribe gets RESOURCE_EXHAUSTED ERR_OVERLOADED until there is room")
        func budgetSpent() throws {
            let server = try ModerationTestServer()
            defer { server.tearDown() }
            let app = try server.client()
            let open = app.subscribe(SubscribeRequest(wholeApp: true))
            defer { open.cancel() }
            #expect(waitUntil { server.subscriptionCount == 1 })

            // The test server's budget has no limit: hold all of it but a few hundred bytes, as
            // connections whose output waits would, so that a subscription (1 KiB) has no room.
            let budget = server.memoryBudget
            let held = budget.limit - budget.inUse - 512
            budget.reserve(held, for: .outbound)
            let refused = try app.subscribe(SubscribeRequest(wholeApp: true)).waitForEnd()
            let other = try server.client(app: .two).subscribe(SubscribeRequest(wholeApp: true)).waitForEnd()
            budget.release(held, for: .outbound)
            expectFailure(refused, .resourceExhausted, "ERR_OVERLOADED", mentions: "memory budget")
            expectFailure(other, .resourceExhausted, "ERR_OVERLOADED", mentions: "memory budget")
            #expect(server.subscriptionCount == 1 && !open.hasEnded, "the open subscription is not touched")

            let later = app.subscribe(SubscribeRequest(wholeApp: true))
            defer { later.cancel() }
            #expect(waitUntil { server.subscriptionCount == 2 })
            #expect(!later.hasEnded)
        }
    }
}
