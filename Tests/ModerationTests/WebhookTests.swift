import Moderation
import StoreTestSupport
import TestSupport
import Testing

/// Webhooks as the stores keep them (docs/SERVICE.md "Webhooks"): the app's calls that create,
/// change, delete, list and replay them, and delivery's writes — the lease that lets one server
/// deliver a webhook, and the progress it records only while it holds the lease at the
/// generation it read.
@Suite("Webhooks", .onEveryStore)
struct WebhookTests {
    static let url = "https://hooks.example.com/moderation"
    /// `whsec_` and the base64 of 24 bytes: the shortest secret an app may give.
    static let givenSecret = "whsec_MDEyMzQ1Njc4OWFiY2RlZmdoaWprbG1u"

    /// User "o" owns group "g": the app's log has a few actions before any webhook.
    static func setUp(clock: ManualWallClock = ManualWallClock(), configuration: ModerationService.Configuration? = nil)
        throws -> ServiceHarness
    {
        let harness = try ServiceHarness(
            clock: clock, configuration: configuration ?? ModerationService.Configuration(passwordHasher: .fastForTests)
        )
        let app = harness.client()
        try app.createUser("o")
        try app.createGroup("g", owner: "o")
        return harness
    }

    // MARK: Create

    @Test("a webhook starts at the app's head seq, with a secret made here, or the one given")
    func create() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        let head = try StoreProbe.bounds(harness.store, app: "app").headSeq
        #expect(head > 0)

        let made = try app.createWebhook(
            NewWebhook(url: Self.url, kinds: [.banned, .kicked, .banned], guids: ["g", "Other"], description: "bans"))
        #expect(made.webhook.id.hasPrefix("wh_") && made.webhook.id.utf8.count == 23)
        #expect(made.webhook.status == WebhookStatus(lastDeliveredSeq: head))
        #expect(made.webhook.kinds == [.banned, .kicked], "kinds listed once, in the order given")
        #expect(made.webhook.guids == ["g", "other"])
        #expect(made.webhook.enabled && made.webhook.state == .active)
        // `whsec_` and the base64 of 32 bytes: 44 characters with one '='.
        #expect(made.secret.hasPrefix("whsec_") && made.secret.utf8.count == 6 + 44 && made.secret.hasSuffix("="))
        let base64 = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
        #expect(made.secret.dropFirst(6).allSatisfy { base64.contains($0) })

        let given = try app.createWebhook(NewWebhook(url: Self.url + "/2", secret: Self.givenSecret))
        #expect(given.secret == Self.givenSecret)
        #expect(given.webhook.kinds.isEmpty && given.webhook.guids.isEmpty && given.webhook.description.isEmpty)
        #expect(made.secret != given.secret)

        // The store keeps all of it: the list, and what the ping and delivery read.
        #expect(try app.listWebhooks() == [made.webhook, given.webhook])
        let stored = try app.webhookToTest(made.webhook.id)
        #expect(stored.webhook == made.webhook)
        #expect(stored.secret == made.secret && stored.app == "app" && stored.generation == 0)
        #expect(try app.webhookToTest(given.webhook.id).secret == Self.givenSecret)
        #expect(try harness.service.enabledWebhooks().map(\.webhook.id) == [made.webhook.id, given.webhook.id])
    }

    @Test(
        "a refused webhook names the field",
        arguments: [
            (NewWebhook(url: ""), "url"),
            (NewWebhook(url: "http://hooks.example.com/"), "url"),
            (NewWebhook(url: "https://"), "url"),
            (NewWebhook(url: "https://h.example/" + String(repeating: "p", count: 2_048)), "url"),
            (NewWebhook(url: WebhookTests.url, guids: ["g", "g"]), "guids"),
            (NewWebhook(url: WebhookTests.url, guids: ["g", "G"]), "guids"),
            (NewWebhook(url: WebhookTests.url, guids: ["not valid!"]), "guids"),
            (NewWebhook(url: WebhookTests.url, description: String(repeating: "d", count: 256)), "description"),
            (NewWebhook(url: WebhookTests.url, secret: "secret"), "secret"),
            (NewWebhook(url: WebhookTests.url, secret: "whsec_MDEyMzQ1Njc4OWFiY2RlZg=="), "secret"),
            (NewWebhook(url: WebhookTests.url, secret: "whsec_!!!!"), "secret"),
            (
                NewWebhook(url: WebhookTests.url, secret: WebhookTests.givenSecret.replacing("whsec_", with: "")),
                "secret"
            ),
        ])
    func refusedCreation(_ new: NewWebhook, _ field: String) throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let error = ModerationClient.error { try harness.client().createWebhook(new) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.hasPrefix(field + ":") == true, "\(String(describing: error))")
        #expect(try harness.client().listWebhooks().isEmpty)
    }

    @Test("a description of 255 characters and a URL of 2 048 bytes are allowed")
    func limitsAllowed() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let url = "https://h.example/" + String(repeating: "p", count: 2_048 - 18)
        let made = try harness.client().createWebhook(
            NewWebhook(url: url, description: String(repeating: "d", count: 255)))
        #expect(try harness.client().listWebhooks() == [made.webhook])
    }

    /// One call of the app's webhook calls.
    struct Call: Sendable, CustomTestStringConvertible {
        let name: String
        let run: @Sendable (ModerationClient, String) throws -> Void

        var testDescription: String { name }
    }

    static let calls: [Call] = [
        Call(name: "CreateWebhook") { client, _ in try client.createWebhook() },
        Call(name: "UpdateWebhook") { client, id in try client.updateWebhook(id, WebhookUpdate(description: "x")) },
        Call(name: "DeleteWebhook") { client, id in try client.deleteWebhook(id) },
        Call(name: "ReplayWebhook") { client, id in try client.replayWebhook(id, afterSeq: 1) },
        Call(name: "ListWebhooks") { client, _ in _ = try client.listWebhooks() },
        Call(name: "TestWebhook") { client, id in _ = try client.webhookToTest(id) },
    ]

    @Test("a user may not call them, not even a group's owner", arguments: calls)
    func usersRefused(_ call: Call) throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let made = try harness.client().createWebhook()
        #expect(ModerationClient.code { try call.run(harness.client("o"), made.webhook.id) } == .permissionDenied)
        #expect(try harness.client().listWebhooks() == [made.webhook])
    }

    @Test("an app has at most 10 webhooks: the 11th is rate limited, with the limit in details")
    func limit() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        var ids: [String] = []
        for index in 0..<10 { ids.append(try app.createWebhook(Self.url + "/\(index)").webhook.id) }
        let error = ModerationClient.error { try app.createWebhook(Self.url + "/10") }
        #expect(error?.code == .rateLimited)
        #expect(error?.details == ["limit": "10", "count": "10"])
        #expect(try app.listWebhooks().map(\.id) == ids, "oldest first")
        // Another app has its own ten; a deleted one makes room.
        try harness.client(app: "other").createWebhook()
        try app.deleteWebhook(ids[3])
        try app.createWebhook(Self.url + "/10")
        #expect(try app.listWebhooks().count == 10)
    }

    // MARK: Update, delete, list

    /// A change and what the webhook must look like after it.
    struct Change: Sendable, CustomTestStringConvertible {
        let name: String
        let update: WebhookUpdate
        let expect: @Sendable (inout Webhook) -> Void

        var testDescription: String { name }
    }

    static let changes: [Change] = [
        Change(name: "url", update: WebhookUpdate(url: "https://elsewhere.example/h")) {
            $0.url = "https://elsewhere.example/h"
        },
        Change(name: "kinds", update: WebhookUpdate(kinds: [.muted, .joined, .muted])) {
            $0.kinds = [.muted, .joined]
        },
        Change(name: "kinds cleared", update: WebhookUpdate(kinds: [])) { $0.kinds = [] },
        Change(name: "guids", update: WebhookUpdate(guids: ["G", "h"])) { $0.guids = ["g", "h"] },
        Change(name: "guids cleared", update: WebhookUpdate(guids: [])) { $0.guids = [] },
        Change(name: "description", update: WebhookUpdate(description: "now this")) { $0.description = "now this" },
        Change(name: "disabled", update: WebhookUpdate(enabled: false)) { $0.enabled = false },
        Change(name: "enabled while enabled", update: WebhookUpdate(enabled: true)) { _ in },
        Change(
            name: "every field",
            update: WebhookUpdate(
                url: "https://b.example/", kinds: [.created], guids: ["x"], description: "", enabled: false)
        ) {
            $0.url = "https://b.example/"
            $0.kinds = [.created]
            $0.guids = ["x"]
            $0.description = ""
            $0.enabled = false
        },
    ]

    @Test("an update changes the fields it sets and nothing else", arguments: changes)
    func update(_ change: Change) throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        let made = try app.createWebhook(
            NewWebhook(url: Self.url, kinds: [.banned], guids: ["g"], description: "before"))
        let other = try app.createWebhook(Self.url + "/other").webhook
        var expected = made.webhook
        change.expect(&expected)
        #expect(try app.updateWebhook(made.webhook.id, change.update) == expected)
        #expect(try app.listWebhooks() == [expected, other])
        #expect(try app.webhookToTest(made.webhook.id).secret == made.secret, "the secret stays")
    }

    @Test(
        "refused updates",
        arguments: [
            ("an empty update", "wh_x", WebhookUpdate(), ErrorCode.invalidArgument, "update_mask"),
            ("no id", "", WebhookUpdate(description: "x"), .invalidArgument, "id"),
            ("an unknown id", "wh_unknown", WebhookUpdate(description: "x"), .webhookNotFound, ""),
            ("an id too long", String(repeating: "w", count: 65), WebhookUpdate(enabled: true), .webhookNotFound, ""),
            ("a bad url", nil, WebhookUpdate(url: "http://plain.example/"), .invalidArgument, "url"),
            ("bad guids", nil, WebhookUpdate(guids: ["a", "a"]), .invalidArgument, "guids"),
            (
                "a long description", nil, WebhookUpdate(description: String(repeating: "d", count: 256)),
                .invalidArgument, "description"
            ),
        ] as [(String, String?, WebhookUpdate, ErrorCode, String)])
    func refusedUpdate(_ name: String, _ id: String?, _ update: WebhookUpdate, _ code: ErrorCode, _ field: String)
        throws
    {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        let made = try app.createWebhook().webhook
        let error = ModerationClient.error { try app.updateWebhook(id ?? made.id, update) }
        #expect(error?.code == code, "\(name)")
        if !field.isEmpty { #expect(error?.message.hasPrefix(field + ":") == true, "\(String(describing: error))") }
        #expect(try app.listWebhooks() == [made])
    }

    @Test("disabling and enabling move the webhook to a new generation, clear its failures, keep its cursor")
    func disableAndEnable() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        let id = try app.createWebhook().webhook.id
        #expect(try harness.claim([id], owner: "server-a") == [id])
        let failing = WebhookStatus(
            lastDeliveredSeq: 1, consecutiveFailures: 3, lastError: "HTTP 500",
            nextAttemptAt: harness.clock.peek + 60_000,
            failingSince: harness.clock.peek)
        #expect(try harness.record(id, owner: "server-a", generation: 0, status: failing))
        #expect(try harness.enabled(id)?.generation == 0)
        #expect(try app.listWebhooks().first?.state == .failing)

        let disabled = try app.updateWebhook(id, WebhookUpdate(enabled: false))
        #expect(!disabled.enabled && disabled.state == .disabled)
        #expect(disabled.status.consecutiveFailures == 3 && disabled.status.nextAttemptAt == 0)
        #expect(try harness.enabled(id) == nil, "delivery no longer sees it")
        #expect(try app.webhookToTest(id).generation == 1)
        // Delivery's outcome read before the change is not recorded over it.
        #expect(try !harness.record(id, owner: "server-a", generation: 0, status: WebhookStatus(lastDeliveredSeq: 2)))

        let enabled = try app.updateWebhook(id, WebhookUpdate(enabled: true))
        #expect(enabled.enabled && enabled.state == .active)
        #expect(enabled.status == WebhookStatus(lastDeliveredSeq: 1), "failures cleared, the cursor kept")
        let seen = try #require(try harness.enabled(id))
        #expect(seen.generation == 2 && seen.webhook == enabled)
        // An update that leaves `enabled` as it is keeps the generation.
        try app.updateWebhook(id, WebhookUpdate(enabled: true))
        try app.updateWebhook(id, WebhookUpdate(description: "same generation"))
        #expect(try harness.enabled(id)?.generation == 2)
    }

    @Test("an app sees, changes and deletes only its own webhooks")
    func appsIsolated() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let a = harness.client()
        let b = harness.client(app: "b")
        let mine = try a.createWebhook().webhook
        #expect(try b.listWebhooks().isEmpty)
        #expect(ModerationClient.code { try b.webhookToTest(mine.id) } == .webhookNotFound)
        #expect(
            ModerationClient.code { try b.updateWebhook(mine.id, WebhookUpdate(enabled: false)) } == .webhookNotFound)
        #expect(ModerationClient.code { try b.replayWebhook(mine.id, afterSeq: 0) } == .webhookNotFound)
        #expect(ModerationClient.code { try b.deleteWebhook(mine.id) } == .webhookNotFound)
        let theirs = try b.createWebhook().webhook
        #expect(theirs.status.lastDeliveredSeq == 0, "b's log is empty")
        #expect(try a.listWebhooks() == [mine])
        #expect(try b.listWebhooks() == [theirs])
        let all = try harness.service.enabledWebhooks()
        #expect(Set(all.map(\.webhook.id)) == [mine.id, theirs.id])
        #expect(all.first { $0.webhook.id == theirs.id }?.app == "b")
        #expect(all.first { $0.webhook.id == mine.id }?.app == "app")
    }

    @Test("a deleted webhook is gone; the list is oldest first, with each one's status")
    func deleteAndList() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        let made = try (0..<3).map { try app.createWebhook(Self.url + "/\($0)").webhook }
        #expect(try app.listWebhooks() == made)
        #expect(try app.deleteWebhook(made[1].id) == made[1])
        #expect(try app.listWebhooks() == [made[0], made[2]])
        #expect(ModerationClient.code { try app.deleteWebhook(made[1].id) } == .webhookNotFound)
        #expect(ModerationClient.code { try app.webhookToTest(made[1].id) } == .webhookNotFound)
        #expect(try harness.claim([made[1].id], owner: "server-a").isEmpty, "no lease on a deleted webhook")
        #expect(
            try !harness.record(
                made[1].id, owner: "server-a", generation: 0, status: WebhookStatus(lastDeliveredSeq: 9)))

        // Status as delivery recorded it.
        #expect(try harness.claim([made[2].id], owner: "server-a") == [made[2].id])
        let status = WebhookStatus(
            lastDeliveredSeq: 2, consecutiveFailures: 1, lastError: "timed out", nextAttemptAt: 5)
        #expect(try harness.record(made[2].id, owner: "server-a", generation: 0, status: status))
        let listed = try app.listWebhooks()
        #expect(listed.map(\.id) == [made[0].id, made[2].id])
        #expect(listed[1].status == status && listed[1].state == .failing)
        #expect(try app.deleteWebhook(made[2].id).status == status)
        #expect(try app.listWebhooks() == [made[0]])
    }

    @Test("created in the same millisecond, webhooks are listed by id")
    func sameMillisecond() throws {
        let harness = try Self.setUp(clock: ManualWallClock(ticking: false))
        defer { harness.tearDown() }
        let app = harness.client()
        let made = try (0..<4).map { try app.createWebhook(Self.url + "/\($0)").webhook }
        #expect(try app.listWebhooks() == made.sorted { $0.id < $1.id })
    }

    @Test("every field is kept across a restart of the store")
    func durable() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        let made = try app.createWebhook(
            NewWebhook(
                url: Self.url, kinds: [.unbanned, .created, .contentRulesChanged], guids: ["g", "b-2", "c_3"],
                description: "Ünïcödé \"quoted\", {braces}", secret: Self.givenSecret))
        #expect(try harness.claim([made.webhook.id], owner: "server-a") == [made.webhook.id])
        let status = WebhookStatus(
            lastDeliveredSeq: 1, consecutiveFailures: 2, lastError: "HTTP 503: \"busy\"",
            nextAttemptAt: 1_700_000_100_000,
            failingSince: 1_700_000_000_000)
        #expect(try harness.record(made.webhook.id, owner: "server-a", generation: 0, status: status))
        var expected = made.webhook
        expected.status = status
        try harness.reopen()
        let stored = try harness.client().webhookToTest(made.webhook.id)
        #expect(stored.webhook == expected)
        #expect(stored.secret == Self.givenSecret && stored.generation == 0 && stored.appID > 0)
        // The lease outlived the restart too: another server cannot take it before it expires.
        #expect(try harness.claim([made.webhook.id], owner: "server-b").isEmpty)
    }

    // MARK: Replay

    @Test("a replay moves the cursor, clears the failures and moves to a new generation")
    func replay() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        let id = try app.createWebhook().webhook.id
        try app.updateGroup(GroupUpdate(guid: "g", name: "later"))
        let head = try StoreProbe.bounds(harness.store, app: "app").headSeq
        #expect(try harness.claim([id], owner: "server-a") == [id])
        #expect(
            try harness.record(
                id, owner: "server-a", generation: 0,
                status: WebhookStatus(lastDeliveredSeq: head - 1, consecutiveFailures: 1, lastError: "HTTP 500")))

        let replayed = try app.replayWebhook(id, afterSeq: 0)
        #expect(replayed.status == WebhookStatus(lastDeliveredSeq: 0))
        #expect(try app.listWebhooks() == [replayed])
        #expect(try harness.enabled(id)?.generation == 1)
        // A batch in flight across the replay cannot move the cursor back past it.
        #expect(
            try !harness.record(id, owner: "server-a", generation: 0, status: WebhookStatus(lastDeliveredSeq: head)))
        #expect(try harness.record(id, owner: "server-a", generation: 1, status: WebhookStatus(lastDeliveredSeq: 1)))

        #expect(try app.replayWebhook(id, afterSeq: head).status.lastDeliveredSeq == head, "the head itself")
        let past = ModerationClient.error { try app.replayWebhook(id, afterSeq: head + 1) }
        #expect(past?.code == .invalidArgument && past?.message.hasPrefix("after_seq:") == true)
        #expect(try harness.enabled(id)?.generation == 2)

        // A disabled webhook stays disabled.
        try app.updateWebhook(id, WebhookUpdate(enabled: false))
        let still = try app.replayWebhook(id, afterSeq: 1)
        #expect(!still.enabled && still.status.lastDeliveredSeq == 1)
    }

    @Test("a replay from before retention's cutoff is ERR_CURSOR_EXPIRED")
    func replayPastRetention() throws {
        let clock = ManualWallClock(ticking: false)
        let retention: Int64 = 60_000
        let harness = try Self.setUp(
            clock: clock,
            configuration: ModerationService.Configuration(passwordHasher: .fastForTests, actionRetentionMs: retention))
        defer { harness.tearDown() }
        let app = harness.client()
        try app.updateGroup(GroupUpdate(guid: "g", name: "second"))
        let id = try app.createWebhook().webhook.id
        clock.advance(by: retention + 1)
        try app.updateGroup(GroupUpdate(guid: "g", name: "third"))
        #expect(try harness.service.runMaintenanceAndWait().prunedActions > 0)
        let bounds = try StoreProbe.bounds(harness.store, app: "app")
        #expect(bounds.prunedThrough > 0)
        #expect(
            ModerationClient.code { try app.replayWebhook(id, afterSeq: bounds.prunedThrough - 1) } == .cursorExpired)
        #expect(
            try app.replayWebhook(id, afterSeq: bounds.prunedThrough).status.lastDeliveredSeq == bounds.prunedThrough)
    }

    // MARK: Leases and delivery's progress

    @Test("a lease is held by one server until it expires or is released")
    func leases() throws {
        let clock = ManualWallClock(ticking: false)
        let harness = try Self.setUp(clock: clock)
        defer { harness.tearDown() }
        let app = harness.client()
        let one = try app.createWebhook(Self.url + "/1").webhook.id
        let two = try app.createWebhook(Self.url + "/2").webhook.id

        #expect(try harness.claim([one], owner: "a", durationMs: 30_000) == [one])
        #expect(try harness.claim([one, two], owner: "b", durationMs: 30_000) == [two], "a holds one")
        #expect(try harness.claim([one, "wh_gone"], owner: "a", durationMs: 30_000) == [one], "renewed; none gone")
        clock.advance(by: 29_999)
        #expect(try harness.claim([one], owner: "b").isEmpty, "not expired yet")
        clock.advance(by: 1)
        #expect(
            try harness.claim([one, two], owner: "b", durationMs: 30_000) == [one, two],
            "a's expired at its expiry; b's own renewed")
        #expect(try harness.claim([one, two], owner: "a").isEmpty)
        // Only the holder records; `a`'s outcome after losing the lease is dropped.
        #expect(try !harness.record(one, owner: "a", generation: 0, status: WebhookStatus(lastDeliveredSeq: 1)))
        #expect(try harness.record(one, owner: "b", generation: 0, status: WebhookStatus(lastDeliveredSeq: 1)))

        try harness.release(owner: "b")
        #expect(try !harness.record(one, owner: "b", generation: 0, status: WebhookStatus(lastDeliveredSeq: 2)))
        #expect(try harness.claim([one, two], owner: "a") == [one, two], "free at once after the release")
        try harness.release(owner: "nobody")
        #expect(try harness.claim([one, two], owner: "b").isEmpty, "releasing another's leases frees nothing")
        #expect(try app.listWebhooks().first?.status.lastDeliveredSeq == 1)
    }

    @Test("an outcome is recorded only by the lease's holder at the current generation")
    func recordDelivery() throws {
        let harness = try Self.setUp()
        defer { harness.tearDown() }
        let app = harness.client()
        let made = try app.createWebhook().webhook
        let id = made.id
        let done = WebhookStatus(lastDeliveredSeq: 7)
        #expect(try !harness.record(id, owner: "a", generation: 0, status: done), "nobody holds the lease")
        #expect(try harness.claim([id], owner: "a") == [id])
        #expect(try !harness.record(id, owner: "b", generation: 0, status: done), "another owner")
        #expect(try !harness.record(id, owner: "a", generation: 1, status: done), "a generation not reached")
        #expect(try app.listWebhooks() == [made], "nothing changed")

        #expect(try harness.record(id, owner: "a", generation: 0, status: done))
        #expect(try app.listWebhooks().first?.status == done)
        #expect(try harness.enabled(id)?.webhook.status == done)
        #expect(try harness.enabled(id)?.generation == 0, "recording does not move the generation")

        // Delivery gives up: the webhook is disabled with the reason, and delivery no longer sees it.
        let gaveUp = WebhookStatus(lastDeliveredSeq: 7, consecutiveFailures: 9, lastError: "failing for 3 days")
        #expect(try harness.record(id, owner: "a", generation: 0, status: gaveUp, enabled: false))
        #expect(try harness.enabled(id) == nil)
        let listed = try #require(try app.listWebhooks().first)
        #expect(!listed.enabled && listed.state == .disabled && listed.status == gaveUp)
        // The app turns it on again: from its cursor, failures cleared.
        #expect(try app.updateWebhook(id, WebhookUpdate(enabled: true)).status == WebhookStatus(lastDeliveredSeq: 7))
        #expect(try harness.enabled(id)?.generation == 1)
    }
}

extension ServiceHarness {
    /// `claimWebhookLeases`, waited for.
    fileprivate func claim(_ ids: [String], owner: String, durationMs: Int64 = 30_000) throws(ModerationError)
        -> Set<String>
    {
        try MutationWaiter.waitForResult({ completion in
            service.claimWebhookLeases(ids, owner: owner, durationMs: durationMs, completion: completion)
        }).get()
    }

    /// `recordWebhookDelivery`, waited for.
    fileprivate func record(
        _ id: String, owner: String, generation: UInt64, status: WebhookStatus, enabled: Bool = true
    ) throws(ModerationError) -> Bool {
        try MutationWaiter.waitForResult({ completion in
            service.recordWebhookDelivery(
                id: id, owner: owner, generation: generation, status: status, enabled: enabled, completion: completion)
        }).get()
    }

    /// `releaseWebhookLeases`, waited for.
    fileprivate func release(owner: String) throws(ModerationError) {
        try MutationWaiter.waitForResult({ completion in
            service.releaseWebhookLeases(owner: owner, completion: completion)
        }).get()
    }

    /// Webhook `id` as delivery sees it (`enabledWebhooks`), or nil when delivery does not.
    fileprivate func enabled(_ id: String) throws(ModerationError) -> StoredWebhook? {
        try service.enabledWebhooks().first { $0.webhook.id == id }
    }
}
