import Moderation
import ModerationPostgres
import Synchronization
import TestSupport
import Testing
import ThreadSupport

/// The schema is created and migrated at start: versioned, one transaction per migration, a
/// database newer than the build refused, instances starting together serialized by an advisory
/// lock.
@Suite("PostgreSQL migrations")
struct MigrationTests {
    @Test("a new schema is created at the build's version; opening it again changes nothing")
    func createsAndReopens() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let first = try PostgresStore(options: PostgresStoreOptions(url: schema.url, schema: schema.name))
        first.close()
        #expect(try schema.value("SELECT count(*) FROM schema_migrations") == "2")
        #expect(try schema.value("SELECT max(version) FROM schema_migrations") == "2")
        let again = try PostgresStore(options: PostgresStoreOptions(url: schema.url, schema: schema.name))
        again.close()
        #expect(try schema.value("SELECT count(*) FROM schema_migrations") == "2")
        #expect(try schema.value("SELECT extname FROM pg_extension WHERE extname = 'pg_trgm'") == "pg_trgm")
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
            #expect(error.message.contains("version 99, newer than this build's 2"), "\(error.message)")
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
        #expect(try schema.value("SELECT count(*) FROM schema_migrations") == "2")
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
        #expect(try schema.value("SELECT count(*) FROM schema_migrations") == "2")
    }
}
