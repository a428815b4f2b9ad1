import Moderation
import ModerationPostgres
import StoreTestSupport
import Synchronization
import TestSupport
import Testing
import ThreadSupport

/// The schema is created and migrated at start: versioned, one transaction per migration, a
/// database newer than the build refused, instances starting together serialized by an advisory
/// lock.
@Suite("PostgreSQL migrations")
struct MigrationTests {
    /// The build's schema version.
    static let version = "8"

    @Test("a new schema is created at the build's version; opening it again changes nothing")
    func createsAndReopens() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let first = try PostgresStore(options: PostgresStoreOptions(url: schema.url, schema: schema.name))
        first.close()
        #expect(try schema.value("SELECT count(*) FROM schema_migrations") == Self.version)
        #expect(try schema.value("SELECT max(version) FROM schema_migrations") == Self.version)
        let again = try PostgresStore(options: PostgresStoreOptions(url: schema.url, schema: schema.name))
        again.close()
        #expect(try schema.value("SELECT count(*) FROM schema_migrations") == Self.version)
        #expect(try schema.value("SELECT extname FROM pg_extension WHERE extname = 'pg_trgm'") == "pg_trgm")
    }

    @Test(
        "a schema an earlier release wrote is upgraded in place and serves",
        arguments: [(UpgradeFixture.previousRelease, "2"), (UpgradeFixture.currentRelease, "3")])
    func upgradesAnEarlierRelease(_ release: String, schemaVersion: String) throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let restore = try PostgresTestConnection(url: schema.url)
        // The release's first start created pg_trgm, which its indexes use. Under the advisory
        // lock the migrations take for it (`Migrations.lockClass`, 'pg_trgm'): two creations at
        // once in one database (tests run in parallel) can fail with a duplicate key.
        try restore.execute(
            """
            BEGIN;
            SELECT pg_advisory_xact_lock(hashtext('moderation.schema'), hashtext('pg_trgm'));
            CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;
            COMMIT
            """)
        try restore.execute(try UpgradeFixture.postgres(release, schema: schema.name))
        #expect(try schema.value("SELECT max(version) FROM schema_migrations") == schemaVersion)
        let fixture = UpgradedStoreChecks.Log(
            headSeq: UInt64(try schema.value("SELECT head_seq FROM apps WHERE name = 'app1'") ?? "") ?? 0,
            lobbyActions: Int(
                try schema.value(
                    "SELECT count(*) FROM actions a JOIN groups g ON g.id = a.group_id WHERE g.guid = 'lobby'") ?? "")
                ?? 0,
            kickReplyHex: try schema.value("SELECT encode(reply, 'hex') FROM idempotency WHERE key = 'fixture-kick'")
                ?? "")
        let lastTimestamp = Int64(try schema.value("SELECT max(timestamp) FROM actions") ?? "") ?? 0
        let clock = ManualWallClock(start: lastTimestamp + 60_000, ticking: false)
        let store = try PostgresStore(options: PostgresStoreOptions(url: schema.url, schema: schema.name))
        let service = ModerationService(
            store: store, now: clock.function,
            configuration: ModerationService.Configuration(passwordHasher: .fastForTests))
        try UpgradedStoreChecks.run(service: service, store: store, clock: clock, app: "app1", fixture: fixture)
        service.shutdown()
        store.close()
        #expect(try schema.value("SELECT max(version) FROM schema_migrations") == Self.version)
        #expect(
            try schema.value(
                "SELECT count(*) FROM pg_indexes WHERE schemaname = '\(schema.name)' AND indexname IN ('members_by_mute_expiry', 'bans_by_user')"
            ) == "2")
    }

    @Test("a schema newer than the build is refused")
    func newerRefused() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        try PostgresStore(options: PostgresStoreOptions(url: schema.url, schema: schema.name)).close()
        try PostgresCluster.execute(
            "INSERT INTO \(schema.name).schema_migrations (version) VALUES (99)", url: schema.url)
        do {
            _ = try PostgresStore(options: PostgresStoreOptions(url: schema.url, schema: schema.name))
            Issue.record("a schema at version 99 was opened")
        } catch {
            #expect(error.code == .internal)
            #expect(error.message.contains("version 99, newer than this build's \(Self.version)"), "\(error.message)")
        }
    }

    @Test("instances that start at once migrate once")
    func concurrentStarts() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let failures = Mutex<[ModerationError]>([])
        let threads = (0..<6).map { index in
            WorkerThread(name: "migrate-\(index)") {
                do throws(ModerationError) {
                    try PostgresStore(options: PostgresStoreOptions(url: schema.url, schema: schema.name)).close()
                } catch {
                    failures.withLock { $0.append(error) }
                }
            }
        }
        for thread in threads { thread.join() }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        #expect(try schema.value("SELECT count(*) FROM schema_migrations") == Self.version)
    }

    @Test("a migration waits for the advisory lock another instance holds")
    func advisoryLockSerializes() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let holder = try PostgresTestConnection(url: schema.url)
        try holder.execute(
            "BEGIN; SELECT pg_advisory_xact_lock(hashtext('moderation.schema'), hashtext('\(schema.name)'))")
        let opened = BlockingSemaphore()
        let outcome = Mutex<ModerationError?>(nil)
        let opener = WorkerThread(name: "migrate-waiting") {
            do throws(ModerationError) {
                try PostgresStore(options: PostgresStoreOptions(url: schema.url, schema: schema.name)).close()
            } catch {
                outcome.withLock { $0 = error }
            }
            opened.signal()
        }
        #expect(!opened.wait(milliseconds: 500), "the store opened while another instance held the migration lock")
        try holder.execute("COMMIT")
        #expect(opened.wait(milliseconds: 30_000), "the store did not open once the lock was released")
        opener.join()
        #expect(outcome.withLock { $0 } == nil)
        #expect(try schema.value("SELECT count(*) FROM schema_migrations") == Self.version)
    }
}
