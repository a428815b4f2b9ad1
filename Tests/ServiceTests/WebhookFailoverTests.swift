internal import Glibc
import ModerationMessages
import RPCCore
import RPCPosix
import StoreTestSupport
import TestSupport
import Testing

extension EndToEnd {
    /// Webhook delivery across process deaths: the real `moderation-server` killed with SIGKILL in
    /// the middle of a write burst and restarted (nothing committed is missing, and only the batch
    /// in flight comes twice), and, on PostgreSQL, three instances whose lease holder is killed
    /// (another instance delivers within 10 s, without a gap).
    @Suite("Webhook delivery across process deaths", .serialized, .onEveryStore)
    struct WebhookFailoverTests {
        static let secret = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

        /// The seqs each request carried, in order of arrival.
        static func batches(_ receiver: WebhookReceiver) -> [[UInt64]] {
            receiver.records().map { EndToEnd.WebhookServerTests.seqs($0.body) }
        }

        /// The webhook's cursor as `app` lists it.
        static func cursor(_ app: ModerationWireClient, _ id: String) -> UInt64? {
            (try? app.webhooks())?.first { $0.id == id }?.status?.lastDeliveredSeq
        }

        @Test("SIGKILL mid-burst, then a restart: every committed action arrives; only the batch in flight comes twice")
        func killAndRestart() throws {
            let directory = TemporaryDirectory(prefix: "moderation-webhook-kill")
            defer { directory.remove() }
            var arguments = [
                "--data-dir", directory.path + "/data", "--api-key", "\(TestApp.one.rawValue):\(TestApp.one.apiKey)",
                "--log-level", "warning", "--webhook-allow-private",
            ]
            var postgres: (url: String, schema: String)?
            if case .postgres(let url) = TestBackend.current {
                postgres = (url, PostgresCluster.uniqueSchema("hookkill"))
                arguments += ["--store", "postgres", "--postgres-url", url, "--postgres-schema", postgres!.schema]
            }
            defer { if let postgres { PostgresCluster.dropSchema(postgres.schema, url: postgres.url) } }
            let logPath = directory.path + "/server.log"
            @Sendable func connect(_ port: UInt16) throws -> ClientConnection {
                try ClientConnection.connect(ClientOptions(port: port, apiKey: TestApp.one.apiKey))
            }
            let receiver = try WebhookReceiver(secret: Self.secret)
            var server = try ServerProcess(arguments: arguments, logPath: logPath)
            var app = ModerationWireClient(connection: try connect(server.port), actor: "")
            let users = KillRestartTests.users
            for uid in users { try app.createUser(uid) }
            for (index, guid) in KillRestartTests.groups.enumerated() {
                try app.createGroup(guid, owner: users[index], members: [(users[index + 4], .admin)])
            }
            let created = try app.createWebhook(receiver.url("/ok"), secret: Self.secret)
            let id = try #require(created.webhook?.id)
            let start = created.webhook?.status?.lastDeliveredSeq ?? 0

            let port = server.port
            let load = WriteLoad(threads: 4, groups: KillRestartTests.groups, users: users, seed: 4242) {
                try connect(port)
            }
            load.start()
            let loaded = waitUntil(timeoutMs: 30_000) { load.acks.count >= 300 && !receiver.records().isEmpty }
            let status = try server.kill(SIGKILL)
            #expect(loaded && status & 0x7F == SIGKILL)
            _ = waitUntil(timeoutMs: 15_000) { load.isFinished }
            try load.stop()
            usleep(300_000) // a request sent just before the kill is logged by now
            let beforeRestart = Self.batches(receiver)
            app.connection.close()

            server = try ServerProcess(arguments: arguments, logPath: logPath)
            defer { _ = try? server.kill(SIGTERM) }
            app = ModerationWireClient(connection: try connect(server.port), actor: "")
            defer { app.connection.close() }
            let head = try app.markHead(owner: users[0])
            #expect(
                waitUntil(timeoutMs: 20_000) { (Self.cursor(app, id) ?? 0) >= head },
                "the restarted server delivers up to the head \(head)")
            let all = Self.batches(receiver)
            let delivered = all.flatMap { $0 }
            #expect(Set(delivered) == Set((start + 1)...head), "every committed action arrived")
            var counts: [UInt64: Int] = [:]
            for seq in delivered { counts[seq, default: 0] += 1 }
            let twice = Set(counts.filter { $0.value > 1 }.keys)
            let inFlight = Set(beforeRestart.last ?? [])
            #expect(twice.isSubset(of: inFlight), "only the last batch before the kill came again: \(twice.sorted())")
            #expect(counts.values.allSatisfy { $0 <= 2 })
            print(
                "webhook across SIGKILL: \(load.acks.count) writes acknowledged, \(beforeRestart.count) requests before the kill, \(all.count - beforeRestart.count) after; \(twice.count) actions delivered twice"
            )
        }
    }
}

extension EndToEnd.MultiInstanceTests {
    @Test("the webhook's lease holder killed: another instance delivers within 10 s, without a gap")
    func webhookLeaseTakeover() throws {
        let trio = try EndToEnd.Trio(extraArguments: ["--webhook-allow-private"])
        defer { trio.tearDown() }
        try trio.seed()
        let receiver = try WebhookReceiver(secret: EndToEnd.WebhookFailoverTests.secret)
        let app = try trio.app(0)
        defer { app.connection.close() }
        let created = try app.createWebhook(receiver.url("/ok"), secret: EndToEnd.WebhookFailoverTests.secret)
        let id = try #require(created.webhook?.id)
        let start = created.webhook?.status?.lastDeliveredSeq ?? 0
        // Who holds the lease: its owner names the process (host/pid/random).
        let database = try PostgresTestConnection(url: trio.url)
        var holder: Int?
        _ = waitUntil(timeoutMs: 10_000) {
            let owner = try? database.value("SELECT lease_owner FROM \(trio.schema).webhooks WHERE id = '\(id)'")
            let pid = owner.flatMap { $0.split(separator: "/").dropFirst().first }.flatMap { Int32($0) }
            holder = trio.servers.firstIndex { $0.pid == pid }
            return holder != nil
        }
        let killed = try #require(holder, "no instance took the webhook's lease")
        let survivor = (killed + 1) % 3
        let load = trio.load(survivor, seed: 99)
        load.start()
        _ = waitUntil(timeoutMs: 20_000) { load.acks.count >= 50 && !receiver.records().isEmpty }
        _ = try trio.servers[killed].kill(SIGKILL)
        let killedAt = monotonicMilliseconds()
        let deliveredAtKill = receiver.records().count
        let resumed = waitUntil(timeoutMs: 15_000, pollMs: 20) { receiver.records().count > deliveredAtKill + 1 }
        let resumedAfter = monotonicMilliseconds() - killedAt
        usleep(500_000)
        try load.stop()
        let survivorApp = try trio.app(survivor)
        defer { survivorApp.connection.close() }
        let head = try survivorApp.markHead(owner: EndToEnd.MultiInstanceTests.users[0])
        #expect(resumed && resumedAfter <= 10_000, "delivery resumed \(resumedAfter) ms after the kill")
        #expect(
            waitUntil(timeoutMs: 20_000) { (EndToEnd.WebhookFailoverTests.cursor(survivorApp, id) ?? 0) >= head })
        let delivered = Set(EndToEnd.WebhookFailoverTests.batches(receiver).flatMap { $0 })
        #expect(delivered == Set((start + 1)...head), "no gap across the takeover")
        print("webhook lease takeover: delivery resumed \(resumedAfter) ms after SIGKILL of its holder")
    }

    private func monotonicMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
