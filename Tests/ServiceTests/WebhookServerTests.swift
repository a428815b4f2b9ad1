internal import Glibc
import Moderation
import RPCPosix
import ServerApp
import ServerTestSupport
import StoreTestSupport
import Synchronization
import TestSupport
import Testing

extension EndToEnd {
    /// Webhook delivery by the real server in-process, to a real HTTP receiver (Python's
    /// `http.server`, which checks every signature with the standard library): order and gaps
    /// under a random write load, filters, a receiver that fails and recovers, 410, replay, the
    /// SSRF guard, and a receiver slow enough to hold every request for seconds.
    @Suite("Webhook delivery", .serialized)
    struct WebhookServerTests {
        static let secret = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" // 24 bytes of base64
        static let users = (0..<12).map { "w\($0)" }
        static let groups = ["wg0", "wg1", "wg2"]

        /// A server whose webhooks may use the receiver on 127.0.0.1, with users and groups.
        static func server() throws -> ModerationTestServer {
            let server = try ModerationTestServer(settings: { $0.webhookAllowPrivate = true })
            let app = ModerationClient(service: server.service, caller: Caller(app: TestApp.one.rawValue))
            for uid in users { try app.createUser(uid) }
            for (index, guid) in groups.enumerated() {
                try app.createGroup(
                    guid, owner: users[index], members: [MemberGrant(uid: users[index + 3], scope: .admin)])
            }
            return server
        }

        static func create(
            _ server: ModerationTestServer, url: String, kinds: [ActionKind] = [], guids: [String] = []
        ) throws(ModerationError) -> CreatedWebhook {
            let caller = Caller(app: TestApp.one.rawValue)
            return try MutationWaiter.wait { done in
                server.service.createWebhook(
                    caller, NewWebhook(url: url, kinds: kinds, guids: guids, secret: secret),
                    replay: MutationWaiter.describe, completion: done)
            }.get()
        }

        static func webhook(_ server: ModerationTestServer, _ id: String) throws -> Webhook? {
            try server.service.listWebhooks(Caller(app: TestApp.one.rawValue)).first { $0.id == id }
        }

        static func head(_ server: ModerationTestServer) throws -> UInt64 {
            try server.service.withActionLog(app: TestApp.one.rawValue) { (log) throws(ModerationError) in
                try log.headSeq()
            }
        }

        /// The seqs of the actions a request carried, in body order.
        static func seqs(_ body: String) -> [UInt64] {
            let marker = Array(#""seq":""#.utf8)
            let bytes = Array(body.utf8)
            var seqs: [UInt64] = []
            var index = 0
            while index + marker.count <= bytes.count {
                guard bytes[index..<index + marker.count].elementsEqual(marker) else {
                    index += 1
                    continue
                }
                index += marker.count
                let digits = bytes[index...].prefix { (0x30...0x39).contains($0) }
                seqs.append(UInt64(String(decoding: digits, as: UTF8.self)) ?? 0)
                index += digits.count
            }
            return seqs
        }

        /// Random mutations through two wire connections until `count` are acknowledged.
        static func load(_ server: ModerationTestServer, seed: UInt64, count: Int) throws {
            let port = server.port
            let load = WriteLoad(threads: 2, groups: groups, users: users, seed: seed) {
                try ClientConnection.connect(ClientOptions(port: port, apiKey: TestApp.one.apiKey))
            }
            load.start()
            _ = waitUntil(timeoutMs: 30_000) { load.acks.count >= count }
            try load.stop()
        }

        @Test("every action of a random write load arrives once per batch, in seq order, without a gap, signed")
        func orderAndGaps() throws {
            let server = try Self.server()
            defer { server.tearDown() }
            let receiver = try WebhookReceiver(secret: Self.secret)
            let created = try Self.create(server, url: receiver.url("/switch"))
            let start = created.webhook.status.lastDeliveredSeq
            #expect(start == (try Self.head(server)), "delivery starts after the app's last seq")
            try Self.load(server, seed: 42, count: 400)
            let head = try Self.head(server)
            let arrived = waitUntil(timeoutMs: 20_000) {
                (try? Self.webhook(server, created.webhook.id))??.status.lastDeliveredSeq == head
            }
            #expect(arrived, "the cursor reaches the head \(head)")
            let records = receiver.records()
            let delivered = records.flatMap { Self.seqs($0.body) }
            #expect(delivered == Array((start + 1)...head), "seqs \(start + 1)...\(head), each once, in order")
            for record in records {
                #expect(record.signatureValid, "the signature of \(record.messageID) verifies")
                #expect(record.contentType == "application/json")
                let seqs = Self.seqs(record.body)
                #expect(seqs.count <= 100)
                #expect(record.messageID == "\(created.webhook.id)_\(seqs.first ?? 0)_\(seqs.last ?? 0)")
                #expect(record.body.hasPrefix(#"{"type":"moderation.actions","timestamp":""#))
            }
        }

        @Test("the kinds and guids filters hold; the cursor still moves past what they leave out")
        func filters() throws {
            let server = try Self.server()
            defer { server.tearDown() }
            let receiver = try WebhookReceiver(secret: Self.secret)
            let created = try Self.create(server, url: receiver.url("/ok"), kinds: [.banned, .kicked], guids: ["wg1"])
            let app = ModerationClient(service: server.service, caller: Caller(app: TestApp.one.rawValue))
            try app.ban("wg0", "w6")
            try app.ban("wg1", "w7")
            try app.addMembers("wg1", [MemberGrant(uid: "w8", scope: .participant)])
            try app.kick("wg1", "w8")
            try app.unban("wg1", "w7")
            try app.kick("wg2", "w5")
            let head = try Self.head(server)
            #expect(
                waitUntil(timeoutMs: 10_000) {
                    (try? Self.webhook(server, created.webhook.id))??.status.lastDeliveredSeq == head
                })
            let bodies = receiver.records().map(\.body).joined()
            #expect(Self.seqs(bodies).count == 2, "the ban and the kick in wg1: \(bodies)")
            #expect(
                bodies.contains(#""action":"ACTION_TYPE_BANNED""#) && bodies.contains(#""action":"ACTION_TYPE_KICKED""#)
            )
            #expect(!bodies.contains(#""guid":"wg0""#) && !bodies.contains(#""guid":"wg2""#))
        }

        @Test(
            "a receiver down for 10 s, then 503 with Retry-After, then 200: everything arrives, retries keep their webhook-id"
        )
        func receiverFailures() throws {
            let server = try Self.server()
            defer { server.tearDown() }
            let receiver = try WebhookReceiver(secret: Self.secret)
            try receiver.setMode("drop")
            let created = try Self.create(server, url: receiver.url("/switch"))
            let start = created.webhook.status.lastDeliveredSeq
            let app = ModerationClient(service: server.service, caller: Caller(app: TestApp.one.rawValue))
            for uid in ["w9", "w10", "w11"] { try app.ban("wg0", uid) }
            let head = try Self.head(server)
            #expect(
                waitUntil(timeoutMs: 5_000) {
                    (try? Self.webhook(server, created.webhook.id))??.status.consecutiveFailures ?? 0 >= 2
                })
            let failing = try Self.webhook(server, created.webhook.id)
            #expect(failing?.status.lastError.isEmpty == false)
            #expect(failing?.status.nextAttemptAt ?? 0 > 0)
            usleep(8_000_000)
            try receiver.setMode("status:503:1")
            usleep(2_500_000)
            try receiver.setMode("ok")
            let delivered = waitUntil(timeoutMs: 40_000) {
                (try? Self.webhook(server, created.webhook.id))??.status.lastDeliveredSeq == head
            }
            #expect(delivered)
            let answered = receiver.records()
            var bodies: [String: String] = [:]
            var order: [String] = []
            for record in answered {
                #expect(record.signatureValid)
                if let body = bodies[record.messageID] {
                    #expect(record.body == body, "a retried batch is the same bytes under the same webhook-id")
                } else {
                    bodies[record.messageID] = record.body
                    order.append(record.messageID)
                }
            }
            #expect(answered.count > order.count, "the first batch was retried under its webhook-id")
            let seqs = order.flatMap { Self.seqs(bodies[$0] ?? "") }
            #expect(seqs == Array((start + 1)...head), "each action once across the batches, in order")
            let after = try Self.webhook(server, created.webhook.id)
            #expect(after?.status.consecutiveFailures == 0 && after?.status.lastError == "")
        }

        @Test("410 Gone disables the webhook with the reason; ReplayWebhook and enabling deliver again")
        func goneAndReplay() throws {
            let server = try Self.server()
            defer { server.tearDown() }
            let receiver = try WebhookReceiver(secret: Self.secret)
            try receiver.setMode("status:410")
            let created = try Self.create(server, url: receiver.url("/switch"))
            let start = created.webhook.status.lastDeliveredSeq
            let app = ModerationClient(service: server.service, caller: Caller(app: TestApp.one.rawValue))
            try app.ban("wg0", "w9")
            #expect(
                waitUntil(timeoutMs: 10_000) { (try? Self.webhook(server, created.webhook.id))??.enabled == false })
            let disabled = try Self.webhook(server, created.webhook.id)
            #expect(disabled?.state == .disabled)
            #expect(disabled?.status.lastError.contains("410") == true, "\(disabled?.status.lastError ?? "")")
            try receiver.setMode("ok")
            try app.ban("wg0", "w10")
            let caller = Caller(app: TestApp.one.rawValue)
            _ = try MutationWaiter.wait { done in
                server.service.replayWebhook(
                    caller, id: created.webhook.id, afterSeq: start, replay: MutationWaiter.describe, completion: done)
            }.get()
            _ = try MutationWaiter.wait { done in
                server.service.updateWebhook(
                    caller, id: created.webhook.id, WebhookUpdate(enabled: true), replay: MutationWaiter.describe,
                    completion: done)
            }.get()
            let head = try Self.head(server)
            #expect(
                waitUntil(timeoutMs: 10_000) {
                    (try? Self.webhook(server, created.webhook.id))??.status.lastDeliveredSeq == head
                })
            let last = receiver.records().last
            #expect(Self.seqs(last?.body ?? "") == Array((start + 1)...head), "replayed from seq \(start + 1)")
        }

        @Test("without --webhook-allow-private, http and loopback or private addresses are refused")
        func ssrfGuard() throws {
            let server = try ModerationTestServer()
            defer { server.tearDown() }
            let caller = Caller(app: TestApp.one.rawValue)
            for (url, reason) in [
                ("http://example.com/hook", "only https"), ("https://127.0.0.1:9/hook", "loopback"),
                ("https://10.1.2.3/hook", "private"), ("https://169.254.169.254/latest", "metadata"),
                ("https://169.254.1.1/hook", "link-local"),
                ("https://localhost/hook", "loopback"),
            ] {
                let outcome = MutationWaiter.wait { done in
                    server.service.createWebhook(
                        caller, NewWebhook(url: url), replay: MutationWaiter.describe, completion: done)
                }
                guard case .done(.failure(let error), _) = outcome else {
                    Issue.record("\(url) was accepted")
                    continue
                }
                #expect(error.code == .invalidArgument)
                #expect(error.message.contains(reason), "\(url): \(error.message)")
            }
        }

        @Test("a receiver that takes 10 s a request does not slow mutations or CheckPost")
        func slowReceiver() throws {
            let server = try Self.server()
            defer { server.tearDown() }
            let receiver = try WebhookReceiver(secret: Self.secret)
            try receiver.setMode("slow:10000")
            _ = try Self.create(server, url: receiver.url("/switch"))
            let app = ModerationClient(service: server.service, caller: Caller(app: TestApp.one.rawValue))
            var latencies: [Int64] = []
            for round in 0..<200 {
                let started = Self.monotonicMicroseconds()
                let uid = Self.users[6 + round % 6]
                if round % 2 == 0 {
                    _ = try app.ban("wg2", uid, ifNotBanned: true)
                } else {
                    _ = try app.unban("wg2", uid, onlyIfBanned: true)
                }
                _ = try app.checkPost("wg1", Self.users[4], text: "hello there")
                latencies.append(Self.monotonicMicroseconds() - started)
            }
            latencies.sort()
            let p99 = latencies[latencies.count * 99 / 100]
            #expect(receiver.records().count <= 2, "one request in flight, held by the receiver")
            #expect(p99 < 250_000, "p99 of a mutation and a CheckPost: \(p99) µs")
        }

        static func monotonicMicroseconds() -> Int64 {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1_000
        }
    }
}
