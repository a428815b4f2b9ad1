import CSQLite
import Moderation
import ModerationSQLite
import StoreTestSupport
import TestSupport
import Testing

@Suite("Schema migrations")
struct MigrationTests {
    @Test("an empty directory is migrated, and reopening changes nothing")
    func migrateThenReopen() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let options = SQLiteStoreOptions(directory: directory.path + "/nested/data", durability: .normal)
        let first = try SQLiteStore(options: options)
        first.close()
        let schemaBefore = try Self.schema(options.databasePath)
        let versionBefore = try Self.userVersion(options.databasePath)
        #expect(versionBefore >= 1)
        let second = try SQLiteStore(options: options)
        second.close()
        #expect(try Self.schema(options.databasePath) == schemaBefore)
        #expect(try Self.userVersion(options.databasePath) == versionBefore)
    }

    @Test("the schema uses STRICT tables, WAL mode, and an index for every list")
    func schemaShape() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let options = SQLiteStoreOptions(directory: directory.path, durability: .normal)
        let store = try SQLiteStore(options: options)
        store.close()
        let schema = try Self.schema(options.databasePath)
        for table in [
            "apps", "users", "groups", "group_tags", "group_revisions", "members", "bans", "actions", "idempotency",
            "search_grams", "search_gram_counts", "app_bans", "content_rules", "content_rule_sets", "webhooks",
        ] {
            let definition = try #require(schema.first { $0.hasPrefix("table \(table) ") }, "table \(table) missing")
            #expect(definition.contains("STRICT"), "table \(table) is not STRICT")
        }
        for index in [
            "members_by_joined", "members_by_user", "bans_by_uid", "bans_by_expiry", "actions_by_group",
            "groups_by_created", "idempotency_by_age", "app_bans_by_uid", "app_bans_by_expiry", "webhooks_by_app",
            "webhooks_by_lease_owner",
        ] {
            #expect(schema.contains { $0.hasPrefix("index \(index) ") }, "index \(index) missing")
        }
        #expect(try Self.text(options.databasePath, "PRAGMA journal_mode") == "wal")
    }

    @Test(
        "a data directory an earlier release wrote opens, upgrades in place and serves",
        arguments: [(UpgradeFixture.previousRelease, 1), (UpgradeFixture.currentRelease, 2)])
    func upgradesAnEarlierRelease(_ release: String, schemaVersion: Int) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let options = SQLiteStoreOptions(directory: directory.path, durability: .normal)
        try Self.execute(options.databasePath, try UpgradeFixture.sqlite(release))
        #expect(try Self.userVersion(options.databasePath) == schemaVersion)
        let fixture = try FixtureCounts(path: options.databasePath)
        // The release's clock: a minute after its last action, inside its idempotency window.
        let clock = ManualWallClock(start: fixture.lastTimestamp + 60_000, ticking: false)
        let store = try SQLiteStore(options: options)
        let service = ModerationService(
            store: store, now: clock.function,
            configuration: ModerationService.Configuration(passwordHasher: .fastForTests))
        try UpgradedStoreChecks.run(service: service, store: store, clock: clock, app: "app1", fixture: fixture.log)
        service.shutdown()
        store.close()
        #expect(try Self.userVersion(options.databasePath) == Self.version)
        let schema = try Self.schema(options.databasePath)
        for index in [
            "members_by_joined", "members_by_mute_expiry", "bans_by_user", "invites_by_group", "invites_by_user",
        ] {
            #expect(schema.contains { $0.hasPrefix("index \(index) ") }, "index \(index) missing")
        }
        // Opened again, the upgraded store is at the build's version and migrates nothing.
        try SQLiteStore(options: options).close()
        #expect(try Self.userVersion(options.databasePath) == Self.version)
    }

    /// The build's schema version.
    static let version = 6

    /// What the fixture's database held before the upgrade.
    struct FixtureCounts {
        let log: UpgradedStoreChecks.Log
        let lastTimestamp: Int64

        init(path: String) throws {
            log = UpgradedStoreChecks.Log(
                headSeq: UInt64(try MigrationTests.text(path, "SELECT head_seq FROM apps WHERE name = 'app1'")) ?? 0,
                lobbyActions: Int(try MigrationTests.text(path, "SELECT count(*) FROM actions WHERE group_id = 1"))
                    ?? 0,
                kickReplyHex: try MigrationTests.text(
                    path, "SELECT hex(reply) FROM idempotency WHERE key = 'fixture-kick'"))
            lastTimestamp = Int64(try MigrationTests.text(path, "SELECT max(timestamp) FROM actions")) ?? 0
        }
    }

    @Test("a database from a newer build is refused")
    func newerSchemaRefused() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let options = SQLiteStoreOptions(directory: directory.path, durability: .normal)
        try SQLiteStore(options: options).close()
        try Self.execute(options.databasePath, "PRAGMA user_version = 999")
        #expect(throws: ModerationError.self) { try SQLiteStore(options: options) }
    }

    // MARK: Raw SQLite helpers

    static func withDatabase<T>(_ path: String, _ body: (OpaquePointer) throws -> T) throws -> T {
        var handle: OpaquePointer?
        guard sqlite3_open(path, &handle) == SQLITE_OK, let handle else {
            throw ModerationError(.internal, "cannot open \(path)")
        }
        defer { sqlite3_close(handle) }
        return try body(handle)
    }

    static func rows(_ path: String, _ sql: String) throws -> [[String]] {
        try withDatabase(path) { db in
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
                throw ModerationError(.internal, String(cString: sqlite3_errmsg(db)))
            }
            defer { sqlite3_finalize(statement) }
            var rows: [[String]] = []
            while sqlite3_step(statement) == SQLITE_ROW {
                rows.append(
                    (0..<sqlite3_column_count(statement)).map { column in
                        sqlite3_column_text(statement, column).map { String(cString: $0) } ?? "NULL"
                    })
            }
            return rows
        }
    }

    static func execute(_ path: String, _ sql: String) throws {
        try withDatabase(path) { db in
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
                throw ModerationError(.internal, String(cString: sqlite3_errmsg(db)))
            }
        }
    }

    static func text(_ path: String, _ sql: String) throws -> String {
        try rows(path, sql).first?.first ?? ""
    }

    static func schema(_ path: String) throws -> [String] {
        try rows(path, "SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM sqlite_schema ORDER BY type, name")
            .map { $0[0] }
    }

    static func userVersion(_ path: String) throws -> Int {
        Int(try text(path, "PRAGMA user_version")) ?? -1
    }
}
