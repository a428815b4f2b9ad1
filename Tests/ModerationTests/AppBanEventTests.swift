import Moderation
import ModerationEvents
import StoreTestSupport
import Synchronization
import TestSupport
import Testing

/// Bans from the app and the event stream: `appBanned` and `appUnbanned` reach whole-app
/// subscribers and the user's own subscriptions; a ban ends every subscription the user opened
/// with `ERR_USER_BANNED_FROM_APP` and refuses new ones; a shadow ban, the app's subscriptions
/// and other users' go on.
@Suite("App-wide bans and the event stream", .onEveryStore)
struct AppBanEventTests {
    /// A subscriber's stream: what it was sent ("kind target" per action), and how it ended.
    final class RecordingSink: EventSink {
        private let state = Mutex<(started: Bool, events: [String], ended: SubscriptionEnd?, refused: ErrorCode?)>(
            (false, [], nil, nil))

        func started(afterSeq: UInt64, headSeq: UInt64) -> EventSendOutcome {
            state.withLock { $0.started = true }
            return .sent
        }

        func send(encoded: [UInt8]) -> EventSendOutcome {
            state.withLock { $0.events.append(String(decoding: encoded, as: UTF8.self)) }
            return .sent
        }

        func waitForCapacity(milliseconds: Int) -> Bool { true }
        func end(_ reason: SubscriptionEnd) { state.withLock { $0.ended = reason } }
        func onClose(_ handler: @escaping @Sendable (SinkClosure) -> Void) {}

        func refuse(_ refusal: SubscriptionRefusal) {
            guard case .rejected(let error) = refusal else { return }
            state.withLock { $0.refused = error.code }
        }

        var isStarted: Bool { state.withLock { $0.started } }
        var events: [String] { state.withLock { $0.events } }
        var ended: SubscriptionEnd? { state.withLock { $0.ended } }
        var refused: ErrorCode? { state.withLock { $0.refused } }

        /// The code and last seq of a stream the hub ended because its user was banned.
        var revoked: (code: ErrorCode, lastSeq: UInt64)? {
            guard case .revoked(let error, let lastSeq)? = ended else { return nil }
            return (error.code, lastSeq)
        }
    }

    static func encode(_ action: ActionRecord) -> [UInt8] {
        Array("\(action.kind.rawValue) \(action.actionOn?.uid ?? "-")".utf8)
    }

    /// Starts a subscription on `hub`; waits for it to start, or to be refused.
    static func subscribe(
        _ hub: EventHub, _ actor: String?, _ target: SubscriptionTarget?, afterSeq: UInt64? = nil
    ) -> RecordingSink {
        let sink = RecordingSink()
        hub.startSubscription(
            SubscriptionRequest(caller: Caller(app: "app", actor: actor), target: target, afterSeq: afterSeq),
            sink: sink
        ) { sink.refuse($0) }
        #expect(waitUntil { sink.isStarted || sink.refused != nil }, "the subscription neither started nor was refused")
        return sink
    }

    @Test("a ban ends the user's subscriptions; the app's, other users' and a shadow-banned user's go on")
    func subscriptionsEnd() throws {
        let harness = try AppBanTests.setUp()
        defer { harness.tearDown() }
        let hub = EventHub(service: harness.service, encode: Self.encode)
        defer { hub.shutdown() }
        let own = Self.subscribe(hub, "u", nil)
        let groups = Self.subscribe(hub, "u", .groups(["g"]))
        let followed = Self.subscribe(hub, nil, .user("u"))
        let whole = Self.subscribe(hub, nil, .app)
        let other = Self.subscribe(hub, "p", nil)
        let shadowed = Self.subscribe(hub, "x", nil)
        hub.settle()
        let app = harness.client()
        let head = try AppBanTests.log(harness).last?.seq ?? 0
        let ban = try app.banFromApp("u", reason: "abuse")
        try app.banFromApp("x", shadow: true)
        try app.kick("g", "p")
        try app.unbanFromApp("u")
        hub.settle()

        #expect(own.events == ["appBanned u"], "the user's own subscription gets the ban, then ends")
        #expect(own.revoked?.code == .userBannedFromApp && own.revoked?.lastSeq == ban.action.seq)
        #expect(groups.events.isEmpty && groups.revoked?.code == .userBannedFromApp)
        #expect(groups.revoked?.lastSeq == head, "it had sent nothing: it resumes where it started")
        #expect(followed.events == ["appBanned u", "kicked p", "appUnbanned u"] && followed.ended == nil)
        #expect(whole.events == ["appBanned u", "appBanned x", "kicked p", "appUnbanned u"] && whole.ended == nil)
        #expect(other.events == ["kicked p"] && other.ended == nil)
        #expect(shadowed.events == ["appBanned x"] && shadowed.ended == nil, "a shadow ban ends nothing")
    }

    @Test("a banned user's subscription is refused; once the ban is lifted, or has expired, it starts")
    func refusedWhileBanned() throws {
        let clock = ManualWallClock(ticking: false)
        let harness = try AppBanTests.setUp(clock)
        defer { harness.tearDown() }
        let hub = EventHub(service: harness.service, encode: Self.encode)
        defer { hub.shutdown() }
        let app = harness.client()
        try app.banFromApp("u", durationMs: 1_000)
        #expect(Self.subscribe(hub, "u", nil).refused == .userBannedFromApp)
        #expect(Self.subscribe(hub, "u", .groups(["g"])).refused == .userBannedFromApp)
        // The ban comes first, before what the user may follow.
        #expect(Self.subscribe(hub, "u", .app).refused == .userBannedFromApp)
        #expect(Self.subscribe(hub, "u", .user("p")).refused == .userBannedFromApp)
        #expect(Self.subscribe(hub, "u", .groups(["missing"])).refused == .userBannedFromApp)
        #expect(Self.subscribe(hub, "p", .app).refused == .permissionDenied)
        #expect(Self.subscribe(hub, nil, .user("u")).isStarted, "the app may follow a banned user")
        clock.advance(by: 1_000)
        #expect(Self.subscribe(hub, "u", .groups(["g"])).isStarted, "the ban has expired")
        try app.banFromApp("p", shadow: true)
        #expect(Self.subscribe(hub, "p", nil).isStarted)
    }

    @Test("a replay across a ban lifted before the start delivers it and goes on")
    func replayAcrossALiftedBan() throws {
        let harness = try AppBanTests.setUp()
        defer { harness.tearDown() }
        let hub = EventHub(service: harness.service, encode: Self.encode)
        defer { hub.shutdown() }
        let app = harness.client()
        let start = try AppBanTests.log(harness).last?.seq ?? 0
        try app.banFromApp("u")
        try app.unbanFromApp("u")
        let replayed = Self.subscribe(hub, "u", nil, afterSeq: start)
        try app.kick("g", "p")
        // The replay hands over to live delivery on its own thread: wait for the live action.
        #expect(waitUntil { replayed.events.count >= 3 }, "events so far: \(replayed.events)")
        #expect(replayed.events == ["appBanned u", "appUnbanned u", "kicked p"] && replayed.ended == nil)
        let ban = try app.banFromApp("u")
        hub.settle()
        #expect(waitUntil { replayed.revoked != nil }, "the ban did not end the subscription")
        #expect(replayed.revoked?.code == .userBannedFromApp && replayed.revoked?.lastSeq == ban.action.seq)
    }
}
