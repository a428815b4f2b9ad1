import CSQLite
import CSQLiteFaultVFS
import CSQLiteWAL
import Glibc
import Synchronization
import TestSupport
import Testing

/// The VFS that writes a commit's WAL frames in one system call (CSQLiteWAL): fewer writes, and
/// nothing SQLite relies on changed — readers see every commit whole, a transaction that spills
/// and rolls back leaves nothing, checkpoints and WAL restarts keep the data, and a write that
/// fails fails the COMMIT.
@Suite("WAL write coalescing (CSQLiteWAL)")
struct WALVFSTests {
    /// A raw connection through the VFS.
    final class Connection {
        let handle: OpaquePointer

        init(_ path: String, readOnly: Bool = false, vfs: String = CSQLITEWAL_VFS_NAME) throws {
            #expect(csqlitewal_register() == SQLITE_OK)
            var handle: OpaquePointer?
            let access = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
            let flags = access | SQLITE_OPEN_NOMUTEX
            let status = sqlite3_open_v2(path, &handle, flags, vfs)
            guard status == SQLITE_OK, let handle else {
                sqlite3_close_v2(handle)
                throw Failure("open \(path): \(status)")
            }
            self.handle = handle
        }

        deinit { sqlite3_close_v2(handle) }

        /// Runs SQL; the status SQLite returned (SQLITE_OK when every statement ran).
        @discardableResult
        func run(_ sql: String) -> Int32 { sqlite3_exec(handle, sql, nil, nil, nil) }

        func integer(_ sql: String) throws -> Int64 {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else {
                throw Failure("prepare \(sql): \(String(cString: sqlite3_errmsg(handle)))")
            }
            defer { sqlite3_finalize(statement) }
            guard sqlite3_step(statement) == SQLITE_ROW else {
                throw Failure("step \(sql): \(String(cString: sqlite3_errmsg(handle)))")
            }
            return sqlite3_column_int64(statement, 0)
        }

        func text(_ sql: String) throws -> String {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK,
                sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0)
            else {
                sqlite3_finalize(statement)
                throw Failure("\(sql): \(String(cString: sqlite3_errmsg(handle)))")
            }
            defer { sqlite3_finalize(statement) }
            return String(cString: text)
        }

        var walWrites: Int64 { csqlitewal_writes(handle) }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// A database in WAL mode with table t (id, body) and a one-row table of the rows' count.
    static func database(
        in directory: TemporaryDirectory, cacheKiB: Int = 2048, vfs: String = CSQLITEWAL_VFS_NAME
    ) throws -> (String, Connection) {
        let path = directory.path + "/test.sqlite3"
        let writer = try Connection(path, vfs: vfs)
        #expect(try writer.text("PRAGMA journal_mode = WAL") == "wal")
        let setup = writer.run(
            """
            PRAGMA synchronous = NORMAL; PRAGMA cache_size = -\(cacheKiB);
            CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB NOT NULL);
            CREATE TABLE total (n INTEGER NOT NULL); INSERT INTO total VALUES (0);
            """)
        #expect(setup == SQLITE_OK)
        return (path, writer)
    }

    /// A SELECT of `count` rows of `value` (this SQLite has no generate_series).
    static func series(_ count: Int, of value: String) -> String {
        "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < \(count)) SELECT \(value) FROM s"
    }

    /// Inserts `rows` rows of `size` bytes and keeps the count, in one committed transaction.
    static func insert(_ writer: Connection, rows: Int, size: Int) -> Int32 {
        writer.run(
            """
            BEGIN IMMEDIATE;
            INSERT INTO t (body) \(series(rows, of: "randomblob(\(size))"));
            UPDATE total SET n = n + \(rows);
            COMMIT;
            """)
    }

    @Test("a commit of many pages reaches the file in a few writes, not two per frame")
    func coalesces() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (_, writer) = try Self.database(in: directory)
        #expect(Self.insert(writer, rows: 1, size: 10) == SQLITE_OK)
        let before = writer.walWrites
        #expect(before > 0)
        // 40 rows of 3 000 bytes: a page each, 40 frames and more (the index and the count).
        #expect(Self.insert(writer, rows: 40, size: 3000) == SQLITE_OK)
        #expect(try writer.integer("SELECT count(*) FROM t") == 41)
        // Over 40 frames of 4 120 bytes (about 170 KB): three writes of at most 64 KiB, where the
        // default VFS makes two per frame.
        #expect(writer.walWrites - before <= 4, "\(writer.walWrites - before) writes for one commit")
    }

    @Test("readers on other connections see each commit whole while the writer commits")
    func readersSeeWholeCommits() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (path, writer) = try Self.database(in: directory)
        let done = Atomic<Bool>(false)
        let readers = (0..<2).map { _ in
            Background { () -> [String] in
                var failures: [String] = []
                do {
                    let reader = try Connection(path, readOnly: true)
                    while !done.load(ordering: .acquiring) {
                        guard reader.run("BEGIN") == SQLITE_OK else { return ["BEGIN failed"] }
                        let rows = try reader.integer("SELECT count(*) FROM t")
                        let total = try reader.integer("SELECT n FROM total")
                        let bytes = try reader.integer("SELECT coalesce(sum(length(body)), 0) FROM t")
                        guard reader.run("COMMIT") == SQLITE_OK else { return ["COMMIT failed"] }
                        if rows != total || bytes != rows * 700 {
                            failures.append("rows \(rows), total \(total), bytes \(bytes)")
                        }
                    }
                } catch {
                    failures.append("\(error)")
                }
                return failures
            }
        }
        for round in 1...300 {
            #expect(Self.insert(writer, rows: round % 7 + 1, size: 700) == SQLITE_OK)
        }
        done.store(true, ordering: .releasing)
        for reader in readers {
            let failures = try reader.wait(timeoutMs: 30_000)
            #expect(failures.isEmpty, "\(failures.prefix(5))")
        }
        #expect(try writer.text("PRAGMA integrity_check") == "ok")
    }

    @Test("a transaction larger than the cache spills, reads its own rows back, and rolls back to nothing")
    func spillAndRollback() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        // A 256 KiB cache: 4 MB of rows spill to the WAL before the transaction ends.
        let (path, writer) = try Self.database(in: directory, cacheKiB: 256)
        #expect(Self.insert(writer, rows: 10, size: 100) == SQLITE_OK)
        #expect(writer.run("BEGIN IMMEDIATE") == SQLITE_OK)
        #expect(writer.run("INSERT INTO t (body) \(Self.series(1000, of: "zeroblob(4000)"))") == SQLITE_OK)
        #expect(try writer.integer("SELECT count(*) FROM t WHERE length(body) = 4000") == 1000)
        #expect(try writer.integer("SELECT sum(length(body)) FROM t") == 4_000_000 + 1000)
        #expect(writer.run("ROLLBACK") == SQLITE_OK)
        let reader = try Connection(path, readOnly: true)
        #expect(try reader.integer("SELECT count(*) FROM t") == 10)
        // The same again, committed this time: larger than the VFS's buffer, so it goes in pieces.
        #expect(Self.insert(writer, rows: 1000, size: 4000) == SQLITE_OK)
        #expect(try reader.integer("SELECT count(*) FROM t") == 1010)
        #expect(try reader.integer("SELECT n FROM total") == 1010)
        #expect(try writer.text("PRAGMA integrity_check") == "ok")
    }

    @Test("checkpoints and WAL restarts keep every commit, across a reopen")
    func checkpointsAndRestarts() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var (path, writer) = try Self.database(in: directory)
        _ = path
        #expect(writer.run("PRAGMA wal_autocheckpoint = 8") == SQLITE_OK)
        for round in 1...400 {
            #expect(Self.insert(writer, rows: round % 3 + 1, size: 1500) == SQLITE_OK)
        }
        let rows = try writer.integer("SELECT count(*) FROM t")
        #expect(try writer.integer("SELECT n FROM total") == rows)
        #expect(writer.run("PRAGMA wal_checkpoint(TRUNCATE)") == SQLITE_OK)
        #expect(Self.insert(writer, rows: 5, size: 1500) == SQLITE_OK)
        writer = try Connection(path)
        #expect(try writer.integer("SELECT count(*) FROM t") == rows + 5)
        #expect(try writer.integer("SELECT n FROM total") == rows + 5)
        #expect(try writer.text("PRAGMA integrity_check") == "ok")
    }

    /// The VFS over a VFS whose WAL writes fail on demand (CTestSupport): registered once.
    static let failingVFS: String? = {
        guard ctest_register_failing_vfs("test-failing") == SQLITE_OK,
            csqlitewal_register_over("test-failing", "test-coalescing-over-failing") == SQLITE_OK
        else { return nil }
        return "test-coalescing-over-failing"
    }()

    @Test("a WAL write that fails fails the COMMIT; readers see nothing of it, and the next commit works")
    func failedWriteFailsCommit() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let vfs = try #require(Self.failingVFS)
        let (path, writer) = try Self.database(in: directory, vfs: vfs)
        #expect(Self.insert(writer, rows: 3, size: 100) == SQLITE_OK)
        let before = writer.walWrites
        ctest_failing_vfs_fail_wal_writes(1)
        // Everything up to the commit frame is buffered; the write of the buffer fails, and so
        // must the COMMIT (the default VFS would have failed at the first frame).
        let status = Self.insert(writer, rows: 5, size: 100)
        ctest_failing_vfs_fail_wal_writes(0)
        #expect(status & 0xff == SQLITE_IOERR, "COMMIT returned \(status)")
        #expect(writer.walWrites == before + 1, "the failed commit was one write")
        let reader = try Connection(path, readOnly: true)
        #expect(try reader.integer("SELECT count(*) FROM t") == 3)
        #expect(try writer.integer("SELECT n FROM total") == 3)
        #expect(Self.insert(writer, rows: 2, size: 100) == SQLITE_OK)
        #expect(try reader.integer("SELECT count(*) FROM t") == 5)
        #expect(try writer.text("PRAGMA integrity_check") == "ok")
    }
}
