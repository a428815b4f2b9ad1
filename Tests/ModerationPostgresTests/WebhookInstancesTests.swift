import Moderation
import ModerationPostgres
import StoreTestSupport
import Synchronization
import TestSupport
import Testing
import ThreadSupport

/// Webhook leases across instances on one database: one server holds a webhook's lease at a time,
/// and a lease write never waits for a webhook's row while its transaction holds a lock (it is
/// put off to the next batch instead, as a write whose app another writer holds).
@Suite("PostgreSQL store: webhook leases across instances")
struct WebhookInstancesTests {
    @Test("instances claiming the same webhooks at once: each lease goes to one of them")
    func oneHolderEach() throws {
        try Instance.withPair { _, _, first, second in
            let ids = try (0..<5).map { try first.client().createWebhook("https://h.example/\($0)").webhook.id }
            let held = Mutex<[[String]]>([])
            let threads = [("first", first), ("second", second)].map { owner, instance in
                WorkerThread(name: "claim-\(owner)") {
                    let claimed = MutationWaiter.waitForResult { completion in
                        instance.service.claimWebhookLeases(
                            ids, owner: owner, durationMs: 60_000, completion: completion)
                    }
                    held.withLock { $0.append((try? claimed.get()).map { Array($0) } ?? ["failed"]) }
                }
            }
            for thread in threads { thread.join() }
            let claims = held.withLock { $0 }
            #expect(claims.count == 2)
            #expect(claims.flatMap { $0 }.sorted() == ids.sorted(), "\(claims)")
        }
    }

    @Test("a lease write whose webhook another instance holds is put off to the next batch, not deadlocked")
    func deferredWhileHeld() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let clock = ManualWallClock()
        let first = try Instance(url: schema.url, schema: schema.name, clock: clock, writers: 1)
        defer { first.close() }
        let second = try Instance(url: schema.url, schema: schema.name, clock: clock, writers: 1)
        defer { second.close() }
        try ModerationClient(service: first.service, caller: Caller(app: "a1")).createUser("o")
        let id = try ModerationClient(service: first.service, caller: Caller(app: "a2")).createWebhook().webhook.id
        let now = clock.peek

        // The second instance holds the webhook's row in an open transaction: it took the lease.
        let release = BlockingSemaphore()
        let holding = BlockingSemaphore()
        let took = Mutex<Bool?>(nil)
        let holder = ClosureWrite { (tx) throws(ModerationError) in
            let held = try tx.claimWebhookLease(id: id, owner: "second", now: now, expiresAt: now + 60_000)
            took.withLock { $0 = held }
            holding.signal()
            release.wait()
        }
        second.store.submit(holder)
        holding.wait()

        // The first instance's next batch: a write of app a1 (so the transaction holds a lock),
        // then a claim of the held webhook.
        let entered = BlockingSemaphore()
        let go = BlockingSemaphore()
        let gate = ClosureWrite(affinity: "a1") { (tx) throws(ModerationError) in
            _ = try tx.appID(named: "a1")
            entered.signal()
            go.wait()
        }
        first.store.submit(gate)
        entered.wait()
        let claimed = Mutex<Bool?>(nil)
        let claim = ClosureWrite(affinity: "a1") { (tx) throws(ModerationError) in
            let held = try tx.claimWebhookLease(id: id, owner: "first", now: now, expiresAt: now + 60_000)
            claimed.withLock { $0 = held }
        }
        let toA1 = ClosureWrite(affinity: "a1") { (tx) throws(ModerationError) in
            _ = try tx.insertUser(appID: try tx.createApp(named: "a1"), User(uid: "one"))
        }
        first.store.submit(toA1)
        first.store.submit(claim)
        go.signal()
        #expect(gate.wait() == nil)
        #expect(toA1.wait() == nil, "a1's write committed while the webhook was held")
        #expect(first.store.statistics.deferredWrites >= 1)
        release.signal()
        #expect(holder.wait() == nil)
        #expect(took.withLock { $0 } == true)
        #expect(claim.wait() == nil, "the claim ran once the row was free")
        #expect(claimed.withLock { $0 } == false, "the second instance holds the lease")
        #expect(try StoreProbe.user(first.store, app: "a1", uid: "one") != nil)
    }

    @Test("lease writes after a lock is held take the webhook's row without waiting, and do their work")
    func afterALock() throws {
        try Instance.withPair(writers: 1) { _, clock, first, _ in
            let ids = try (0..<2).map { try first.client().createWebhook("https://h.example/\($0)").webhook.id }
            let now = clock.peek
            let outcome = Mutex<[String]>([])
            let write = ClosureWrite(affinity: "app") { (tx) throws(ModerationError) in
                _ = try tx.appID(named: "app")
                var seen: [String] = []
                for id in ids + ["wh_gone"] {
                    seen.append(
                        "claim \(try tx.claimWebhookLease(id: id, owner: "a", now: now, expiresAt: now + 1_000))")
                }
                let status = WebhookStatus(lastDeliveredSeq: 1)
                seen.append(
                    "record \(try tx.recordWebhookDelivery(id: ids[0], owner: "a", generation: 0, status: status, enabled: true))"
                )
                try tx.releaseWebhookLeases(owner: "a")
                seen.append(
                    "claim \(try tx.claimWebhookLease(id: ids[1], owner: "b", now: now, expiresAt: now + 1_000))")
                outcome.withLock { $0 = seen }
            }
            first.store.submit(write)
            #expect(write.wait() == nil)
            #expect(
                outcome.withLock { $0 }
                    == ["claim true", "claim true", "claim false", "record true", "claim true"])
            #expect(try first.client().listWebhooks().map(\.status.lastDeliveredSeq).first == 1)
            #expect(first.store.statistics.deferredWrites == 0)
        }
    }
}
