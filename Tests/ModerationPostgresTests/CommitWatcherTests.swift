import Moderation
import StoreTestSupport
import Synchronization
import TestSupport
import Testing

@testable import ModerationPostgres

/// Events across instances: a store's commit handler is given the actions other instances commit,
/// in seq order, each once, without this instance writing anything — woken by their `NOTIFY`, or,
/// with notifications lost (not listened for), by the poll of the apps' heads.
@Suite("PostgreSQL commit watcher: other instances' actions reach the commit handler")
struct CommitWatcherTests {
    /// Writes through `writer` (users, two groups, joins, a kick, a ban): some fifty actions.
    static func writeSome(through writer: Instance) throws {
        let app = writer.client()
        try app.createUser("o")
        for index in 0..<20 { try app.createUser("u\(index)") }
        try app.createGroup("g0", owner: "o")
        try app.createGroup("g1", owner: "o")
        for index in 0..<20 { _ = try writer.client("u\(index)").join("g\(index % 2)") }
        _ = try writer.client("o").kick("g0", "u0")
        _ = try writer.client("o").ban("g1", "u1", durationMs: 60_000)
    }

    /// Waits until `reader`'s handler was given as many actions as the log holds, then checks it
    /// saw the log exactly: 1, 2, 3, … in order, each once, with the log's content.
    static func expectFollowed(_ reader: Instance, writer: Instance, timeoutMs: Int) throws {
        let log = try StoreProbe.log(writer.store, app: "app")
        #expect(log.map(\.seq) == Array(1...UInt64(log.count)))
        let caughtUp = waitUntil(timeoutMs: timeoutMs, pollMs: 10) { reader.delivered.all.count >= log.count }
        #expect(caughtUp, "the other instance's handler saw \(reader.delivered.all.count) of \(log.count) actions")
        let seen = reader.delivered.all
        #expect(seen.map(\.seq) == log.map(\.seq), "in seq order, gapless, each once")
        #expect(seen.map(\.kind) == log.map(\.kind))
        #expect(seen.map(\.app).allSatisfy { $0 == "app" })
        #expect(reader.store.statistics.committedWrites == 0, "the following instance wrote nothing")
        #expect(reader.store.statistics.actionsReadForGaps >= UInt64(log.count))
    }

    @Test("notified: a long poll interval, yet the actions arrive as they commit")
    func notified() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let clock = ManualWallClock()
        let writer = try Instance(url: schema.url, schema: schema.name, clock: clock)
        defer { writer.close() }
        // A poll a minute apart: only the notifications can bring the actions within the test.
        let name = "w" + schema.name
        let reader = try Instance(url: schema.url, schema: schema.name, clock: clock) {
            $0.pollIntervalMs = 60_000
            $0.applicationName = name
        }
        defer { reader.close() }
        // After LISTEN the watcher reads the heads once: from then on only notifications wake it.
        #expect(waitUntil(timeoutMs: 10_000, pollMs: 10) { Self.watching(schema, name) }, "the watcher listens")
        try Self.writeSome(through: writer)
        try Self.expectFollowed(reader, writer: writer, timeoutMs: 10_000)
        #expect(reader.store.statistics.notifications >= 1)
    }

    @Test(
        "the poll reads every app's head as it connects, then only the followed apps', and finds heads nobody notified")
    func pollsFollowedApps() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let writer = try Instance(url: schema.url, schema: schema.name, clock: ManualWallClock())
        defer { writer.close() }
        for app in ["a", "b", "c"] {
            let client = ModerationClient(service: writer.service, caller: Caller(app: app))
            try client.createUser("o")
            try client.createGroup("g", owner: "o")
        }
        let followed = Mutex<Set<String>>(["b"])
        let polls = Mutex<[[String: UInt64]]>([])
        let statistics = PostgresStatisticsRecorder()
        let watcher = CommitWatcher(
            options: PostgresStoreOptions(url: schema.url, schema: schema.name).connectionOptions,
            notifier: CommitNotifier(schema: schema.name, instance: "watcher"), listens: true, pollIntervalMs: 20,
            statistics: statistics, followedApps: { followed.withLock { $0 } },
            everyAppEvery: 1_000 // not within the test
        ) { heads, retry in
            if retry { polls.withLock { $0.append(heads) } } // a poll's report, not a notification's
        }
        defer { watcher.close() }
        #expect(waitUntil(timeoutMs: 10_000, pollMs: 10) { polls.withLock { $0.count } >= 4 })
        let first = polls.withLock { $0 }
        #expect(Set(first[0].keys) == ["a", "b", "c"], "as it connects: every app's head")
        let head = try #require(first[0]["b"])
        let later = Array(first.dropFirst())
        #expect(later.allSatisfy { $0 == ["b": head] }, "then b's alone: \(first)")

        // A head that moved without a notification (its instance died before its NOTIFY).
        _ = try PostgresCluster.value(
            "UPDATE \"\(schema.name)\".apps SET head_seq = head_seq + 5 WHERE name = 'b'", url: schema.url)
        #expect(waitUntil(timeoutMs: 10_000, pollMs: 10) { polls.withLock { $0.last?["b"] } == head + 5 })

        followed.withLock { $0 = [] }
        let polled = statistics.snapshot.headsPolled
        let settled = polls.withLock { $0.count } + 1
        #expect(waitUntil(timeoutMs: 10_000, pollMs: 10) { polls.withLock { $0.count } >= settled + 3 })
        let last = polls.withLock { Array($0.suffix(3)) }
        #expect(last.allSatisfy { $0.isEmpty }, "nobody follows: no head read: \(last)")
        #expect(statistics.snapshot.headsPolled <= polled + 1)
    }

    @Test("not listening (notifications lost): the poll brings every action, in order")
    func polled() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let clock = ManualWallClock()
        let writer = try Instance(url: schema.url, schema: schema.name, clock: clock)
        defer { writer.close() }
        let reader = try Instance(url: schema.url, schema: schema.name, clock: clock) {
            $0.listensForCommits = false
            $0.pollIntervalMs = 50
        }
        defer { reader.close() }
        try Self.writeSome(through: writer)
        try Self.expectFollowed(reader, writer: writer, timeoutMs: 10_000)
        #expect(reader.store.statistics.notifications == 0)
    }

    @Test("both instances write and follow: each handler sees 1, 2, 3, … once, its own batches and the other's")
    func interleaved() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let clock = ManualWallClock()
        let first = try Instance(url: schema.url, schema: schema.name, clock: clock)
        defer { first.close() }
        let second = try Instance(url: schema.url, schema: schema.name, clock: clock) { $0.pollIntervalMs = 20 }
        defer { second.close() }
        try first.client().createUser("o")
        try first.client().createGroup("g", owner: "o")
        for index in 0..<30 {
            let instance = index % 3 == 0 ? first : second
            try instance.client().createUser("u\(index)")
            _ = try instance.client("u\(index)").join("g")
        }
        let log = try StoreProbe.log(first.store, app: "app")
        for (name, instance) in [("first", first), ("second", second)] {
            let caughtUp = waitUntil(timeoutMs: 10_000, pollMs: 10) { instance.delivered.all.count >= log.count }
            #expect(caughtUp, "\(name) saw \(instance.delivered.all.count) of \(log.count)")
            #expect(instance.delivered.all.map(\.seq) == log.map(\.seq), "\(name): in seq order, each once")
        }
    }

    /// Whether the watcher of the store named `application` has listened and read the heads (its
    /// connection's last statement).
    static func watching(_ schema: TestSchema, _ application: String) -> Bool {
        let sql = """
            SELECT count(*) FROM pg_stat_activity
            WHERE application_name = '\(application)' AND query LIKE 'SELECT name, head_seq FROM apps WHERE%'
            """
        return (try? PostgresCluster.value(sql, url: schema.url)) == "1"
    }
}
