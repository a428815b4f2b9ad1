import Moderation
import ModerationMessages
import RPCCore
import ServerApp
import StoreTestSupport
import Synchronization
import TestSupport
import Testing

extension EndToEnd {
    /// Webhooks over real sockets: each call round-trips with the webhook as the wire shows it
    /// (the secret only in CreateWebhook's response), the refusals with their status and code, and
    /// TestWebhook answered asynchronously through the server's pinger.
    @Suite("Webhooks over the wire", .onEveryStore)
    struct WebhookWireTests {
        static let url = "https://hooks.example/moderation"

        /// The cast on a server that checks webhook URLs by their scheme alone (the service's
        /// default check): no name resolves here, and nothing is delivered in these tests.
        static func cast(_ configure: (inout ModerationServer.Tuning) -> Void = { _ in }) throws -> Cast {
            try Cast { tuning in
                tuning.webhookURLCheck = ModerationService.Configuration.httpsOnly
                configure(&tuning)
            }
        }

        @Test("create, list, update, replay and delete round-trip; the secret is shown once")
        func roundTrip() throws {
            let cast = try Self.cast()
            defer { cast.tearDown() }
            let created = try cast.app.createWebhook(
                Self.url, kinds: [.banned, .kicked, .banned], guids: ["g"], description: "bans")
            let webhook = try #require(created.webhook)
            #expect(webhook.id.hasPrefix("wh_") && webhook.url == Self.url)
            #expect(webhook.kinds == [.banned, .kicked], "listed once each, in the order given")
            #expect(webhook.guids == ["g"] && webhook.description == "bans" && webhook.enabled)
            #expect(webhook.createdAt > 0)
            #expect(webhook.status?.state == .active && webhook.status?.consecutiveFailures == 0)
            #expect(webhook.status?.nextAttemptAt == 0 && webhook.status?.lastError == "")
            #expect(created.secret.hasPrefix("whsec_"))

            let given = "whsec_" + String(repeating: "A", count: 32)
            let second = try cast.app.createWebhook(Self.url + "/2", secret: given)
            #expect(second.secret == given)
            let secondWebhook = try #require(second.webhook)
            let secondID = secondWebhook.id
            #expect(secondWebhook.kinds == [] && secondWebhook.guids == [])

            // Oldest first, by (created_at, id): two made within one millisecond come in id order.
            let listed = try cast.app.webhooks()
            let firstIsOlder = (webhook.createdAt, webhook.id) < (secondWebhook.createdAt, secondID)
            #expect(listed.map(\.id) == (firstIsOlder ? [webhook.id, secondID] : [secondID, webhook.id]))
            #expect(listed.first(where: { $0.id == webhook.id }) == webhook)
            // The Webhook message has no field for a secret: neither secret is anywhere in the reply.
            let listBytes = String(
                decoding: try cast.app.rawCall(ModerationMethods.listWebhooks, ListWebhooksRequest()), as: UTF8.self)
            #expect(!listBytes.contains("whsec_") && !listBytes.contains(created.secret.dropFirst(6)))

            let updated = try cast.app.updateWebhook(
                UpdateWebhookRequest(id: webhook.id, description: "all kinds", updateMask: ["kinds", "description"]))
            #expect(updated.kinds == [] && updated.description == "all kinds" && updated.url == Self.url)
            #expect(updated.guids == ["g"], "a field not in the mask is kept")

            let disabled = try cast.app.updateWebhook(
                UpdateWebhookRequest(id: webhook.id, enabled: false, updateMask: ["enabled"]))
            #expect(!disabled.enabled && disabled.status?.state == .disabled)
            let moved = try cast.app.updateWebhook(
                UpdateWebhookRequest(id: webhook.id, url: Self.url + "/moved", enabled: true))
            #expect(moved.url == Self.url + "/moved" && moved.enabled && moved.status?.state == .active)

            let replayed = try cast.app.replayWebhook(webhook.id, afterSeq: cast.headSeq)
            #expect(replayed.status?.lastDeliveredSeq == cast.headSeq)

            let deleted = try cast.app.deleteWebhook(webhook.id)
            #expect(deleted.id == webhook.id && deleted.url == Self.url + "/moved")
            #expect(try cast.app.webhooks().map(\.id) == [secondID])
        }

        @Test("refusals: not found, the app only, an http URL, an unknown mask path, bad kinds")
        func refusals() throws {
            let cast = try Self.cast()
            defer { cast.tearDown() }
            let id = try #require(try cast.app.createWebhook(Self.url).webhook?.id)
            let missing = "wh_aaaaaaaaaaaaaaaaaaaa"
            for call in [
                { _ = try cast.app.deleteWebhook(missing) },
                { _ = try cast.app.replayWebhook(missing, afterSeq: 0) },
                { _ = try cast.app.testWebhook(missing) },
                {
                    _ = try cast.app.updateWebhook(
                        UpdateWebhookRequest(id: missing, description: "x", updateMask: ["description"]))
                },
            ] as [() throws -> Void] {
                expectFailure(failure { try call() }, .notFound, "ERR_WEBHOOK_NOT_FOUND", mentions: missing)
            }

            let owner = try cast.user("owner")
            for call in [
                { _ = try owner.createWebhook(Self.url) },
                { _ = try owner.webhooks() },
                { _ = try owner.deleteWebhook(id) },
                { _ = try owner.replayWebhook(id, afterSeq: 0) },
                { _ = try owner.testWebhook(id) },
                { _ = try owner.updateWebhook(UpdateWebhookRequest(id: id, enabled: true, updateMask: ["enabled"])) },
            ] as [() throws -> Void] {
                expectFailure(failure { try call() }, .permissionDenied, "ERR_PERMISSION_DENIED", mentions: "owner")
            }

            expectFailure(
                failure { try cast.app.createWebhook("http://hooks.example/plain") }, .invalidArgument,
                "ERR_INVALID_ARGUMENT", mentions: "url")
            expectFailure(
                failure {
                    try cast.app.updateWebhook(
                        UpdateWebhookRequest(id: id, url: "http://hooks.example/plain", updateMask: ["url"]))
                }, .invalidArgument, "ERR_INVALID_ARGUMENT", mentions: "url")
            expectFailure(
                failure {
                    try cast.app.updateWebhook(UpdateWebhookRequest(id: id, updateMask: ["description", "secret"]))
                }, .invalidArgument, "ERR_INVALID_ARGUMENT", mentions: "'secret'")
            expectFailure(
                failure { try cast.app.createWebhook(Self.url, kinds: [.banned, .unspecified]) }, .invalidArgument,
                "ERR_INVALID_ARGUMENT", mentions: "kinds[1]")
            expectFailure(
                failure { try cast.app.createWebhook(Self.url, kinds: [ActionType(rawValue: 999)]) },
                .invalidArgument, "ERR_INVALID_ARGUMENT", mentions: "kinds[0]")
            expectFailure(
                failure {
                    try cast.app.updateWebhook(
                        UpdateWebhookRequest(
                            id: id, kinds: [.kicked, ActionType(rawValue: 999)], updateMask: ["kinds"]))
                }, .invalidArgument, "ERR_INVALID_ARGUMENT", mentions: "kinds[1]")
            #expect(try cast.app.webhooks().map(\.url) == [Self.url], "nothing refused changed the webhook")
        }

        @Test("TestWebhook answers with the pinger's result for the stored webhook, asynchronously")
        func testWebhook() throws {
            let pinger = RecordingPinger(
                answers: [
                    WebhookPingResult(httpStatus: 204, latencyMs: 12, httpVersion: "2"),
                    WebhookPingResult(httpStatus: 0, latencyMs: 3_000, error: "connection refused"),
                ])
            let cast = try Self.cast { $0.webhookPinger = pinger }
            defer { cast.tearDown() }
            let created = try cast.app.createWebhook(Self.url, secret: "whsec_" + String(repeating: "B", count: 32))
            let id = try #require(created.webhook?.id)

            let answered = try cast.app.testWebhook(id)
            #expect(answered.httpStatus == 204 && answered.latencyMs == 12)
            #expect(answered.error == "" && answered.httpVersion == "2")
            let failed = try cast.app.testWebhook(id)
            #expect(failed.httpStatus == 0 && failed.error == "connection refused" && failed.httpVersion == "")

            let pinged = pinger.pinged
            #expect(pinged.count == 2)
            #expect(
                pinged.allSatisfy { $0.webhook.id == id && $0.secret == created.secret && $0.webhook.url == Self.url })
            _ = try? cast.user("owner").testWebhook(id)
            #expect(pinger.pinged.count == 2, "a refused call pings nothing")
        }
    }
}

/// A pinger that records what it was asked to ping and answers each ping with the next of its
/// results, from a thread of its own (as a real one answers when the receiver has).
final class RecordingPinger: WebhookPinger {
    private let state: Mutex<(answers: [WebhookPingResult], pinged: [StoredWebhook])>

    init(answers: [WebhookPingResult]) {
        state = Mutex((answers, []))
    }

    var pinged: [StoredWebhook] { state.withLock { $0.pinged } }

    func ping(_ webhook: StoredWebhook, completion: @escaping @Sendable (WebhookPingResult) -> Void) {
        let answer = state.withLock { state in
            state.pinged.append(webhook)
            return state.answers.isEmpty
                ? WebhookPingResult(httpStatus: 0, latencyMs: 0, error: "no answer scripted")
                : state.answers.removeFirst()
        }
        _ = Background { completion(answer) }
    }
}
