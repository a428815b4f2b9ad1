import Glibc
import Moderation
import ModerationPostgres
import StoreTestSupport
import TestSupport
import Testing

/// PostgreSQL going away: calls fail fast with ERR_STORE_UNAVAILABLE (UNAVAILABLE), the store
/// comes back by itself once the database does, and nothing acknowledged is lost. Each test runs
/// its own cluster, since it stops it.
@Suite("PostgreSQL outages", .serialized)
struct OutageTests {
    static func nowMs() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    @Test("stopped: reads and writes fail fast with ERR_STORE_UNAVAILABLE; restarted: the store recovers")
    func stopAndRestart() throws {
        let cluster = try PostgresCluster.start()
        defer { cluster.tearDown() }
        let instance = try Instance(url: cluster.url, schema: "outage", clock: ManualWallClock())
        defer { instance.close() }
        let app = instance.client()
        try app.createUser("o")
        try app.createGroup("g", owner: "o")
        var acknowledged: [UInt64] = []
        for index in 0..<10 {
            try app.createUser("u\(index)")
            acknowledged.append(try instance.client("u\(index)").join("g").action.seq)
        }

        try cluster.stop()
        for (name, call) in [
            ("write", { () throws -> Void in _ = try instance.client("o").kick("g", "u0") }),
            ("read", { () throws -> Void in _ = try app.getGroup("g") }),
        ] {
            let began = Self.nowMs()
            let code = ModerationClient.code(call)
            #expect(code == .storeUnavailable, "\(name) with PostgreSQL stopped: \(String(describing: code))")
            #expect(Self.nowMs() - began < 3_000, "\(name) took \(Self.nowMs() - began) ms to fail")
        }
        do {
            _ = try app.getGroup("g")
        } catch {
            #expect(error.message.contains("the store is unavailable"), "\(error.message)")
            #expect(error.code.status.rawValue == 14)
        }

        try cluster.restart()
        #expect(waitUntil(timeoutMs: 15_000, pollMs: 100) { (try? app.getGroup("g")) != nil }, "reads recover")
        let recovered = waitUntil(timeoutMs: 15_000, pollMs: 100) {
            (try? instance.client("o").kick("g", "u0")) != nil
        }
        #expect(recovered, "writes recover without restarting the store")
        let log = try StoreProbe.log(instance.store, app: "app")
        #expect(log.map(\.seq) == Array(1...UInt64(log.count)), "gapless after the outage")
        #expect(Set(acknowledged).isSubset(of: Set(log.map(\.seq))), "every acknowledged write is there")
        #expect(instance.store.statistics.reconnects >= 1)
        // One outage, reported once when it began and once when it ended.
        let changes = instance.availability.all
        #expect(changes.count == 2, "\(changes)")
        if case .unavailable(let reason)? = changes.first {
            #expect(!reason.isEmpty)
        } else {
            Issue.record("the first change is not the outage: \(changes)")
        }
        if case .available(let seconds)? = changes.last {
            #expect(seconds > 0 && seconds < 60, "\(seconds) s")
        } else {
            Issue.record("the last change is not the return: \(changes)")
        }
    }

    @Test("the commit watcher reconnects after a restart and catches up: nothing another instance committed is missed")
    func watcherAcrossRestart() throws {
        let cluster = try PostgresCluster.start()
        defer { cluster.tearDown() }
        let clock = ManualWallClock()
        let writer = try Instance(url: cluster.url, schema: "watch", clock: clock)
        defer { writer.close() }
        let follower = try Instance(url: cluster.url, schema: "watch", clock: clock) { $0.pollIntervalMs = 100 }
        defer { follower.close() }
        let app = writer.client()
        try app.createUser("o")
        try app.createGroup("g", owner: "o")
        for index in 0..<5 { try app.createUser("u\(index)") }
        _ = try writer.client("u0").join("g")
        let first = try StoreProbe.log(writer.store, app: "app").count
        #expect(waitUntil(timeoutMs: 10_000, pollMs: 10) { follower.delivered.all.count == first })

        try cluster.stop()
        // Both sides fail while it is down; the follower's watcher keeps trying meanwhile.
        #expect(ModerationClient.code { _ = try writer.client("u0").leave("g") } == .storeUnavailable)
        usleep(300_000)
        try cluster.restart()
        let recovered = waitUntil(timeoutMs: 15_000, pollMs: 100) {
            (try? writer.client("u1").join("g")) != nil
        }
        #expect(recovered, "writes recover")
        for index in 2..<5 { _ = try writer.client("u\(index)").join("g") }
        let log = try StoreProbe.log(writer.store, app: "app")
        let caughtUp = waitUntil(timeoutMs: 15_000, pollMs: 10) { follower.delivered.all.count >= log.count }
        #expect(caughtUp, "the follower saw \(follower.delivered.all.count) of \(log.count) actions")
        #expect(follower.delivered.all.map(\.seq) == log.map(\.seq), "in seq order, gapless, each once")
        #expect(follower.store.statistics.watcherReconnects >= 1)
    }

    @Test("a store that cannot reach PostgreSQL at start says so, without the URL's password")
    func unreachableAtStart() throws {
        let port = try UnusedPort.find()
        let url = "postgresql://moderation:s3cret-pw@127.0.0.1:\(port)/moderation"
        let began = Self.nowMs()
        do {
            _ = try PostgresStore(options: PostgresStoreOptions(url: url, schema: "nowhere"))
            Issue.record("a store opened with no PostgreSQL at \(port)")
        } catch {
            #expect(error.code == .storeUnavailable)
            #expect(!error.message.contains("s3cret-pw"), "\(error.message)")
            #expect(error.message.contains("moderation:***@127.0.0.1"), "\(error.message)")
        }
        #expect(Self.nowMs() - began < 3_000)
    }
}
