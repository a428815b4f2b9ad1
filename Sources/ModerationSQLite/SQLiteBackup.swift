internal import CSQLite
internal import Glibc
public import Moderation

/// Online backup of the store with SQLite's backup API, while the server keeps running.
///
/// The copy is a consistent snapshot of the database as of the end of the copy: pages changed by
/// the running server during the copy are copied again (SQLite restarts the step), so a busy
/// server may make it take longer but never yields a torn file. Restore by stopping the server
/// and putting the copy in place as `<data-dir>/moderation.sqlite3` (without old `-wal`/`-shm`
/// files).
public enum SQLiteBackup {
    /// Copies the store in `directory` to a new database file at `destination`.
    /// - Returns: the number of database pages copied.
    @discardableResult
    public static func copy(directory: String, to destination: String) throws(ModerationError) -> Int {
        let options = SQLiteStoreOptions(directory: directory)
        guard access(options.databasePath, R_OK) == 0 else {
            throw .storage("no store at \(options.databasePath)")
        }
        guard access(destination, F_OK) != 0 else {
            throw .storage("\(destination) already exists; a backup never overwrites a file")
        }
        let source = try open(options.databasePath, flags: SQLITE_OPEN_READONLY)
        defer { sqlite3_close_v2(source) }
        let target = try open(destination, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        defer { sqlite3_close_v2(target) }
        guard let backup = sqlite3_backup_init(target, "main", source, "main") else {
            throw .storage("cannot start the backup: \(String(cString: sqlite3_errmsg(target)))")
        }
        var status: Int32
        repeat {
            status = sqlite3_backup_step(backup, 256)
            if status == SQLITE_BUSY || status == SQLITE_LOCKED { usleep(10_000) }
        } while status == SQLITE_OK || status == SQLITE_BUSY || status == SQLITE_LOCKED
        let pages = Int(sqlite3_backup_pagecount(backup))
        sqlite3_backup_finish(backup)
        guard status == SQLITE_DONE else {
            unlink(destination)
            throw .storage("the backup failed: \(String(cString: sqlite3_errstr(status))) (\(status))")
        }
        return pages
    }

    private static func open(_ path: String, flags: Int32) throws(ModerationError) -> OpaquePointer {
        var handle: OpaquePointer?
        let status = sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK, let handle else {
            sqlite3_close_v2(handle)
            throw .storage("cannot open \(path): \(String(cString: sqlite3_errstr(status)))")
        }
        sqlite3_busy_timeout(handle, 5_000)
        return handle
    }
}
