internal import CSQLite
import TestSupport

/// Checks from outside the server whether SQLite could checkpoint its WAL and start it over, which
/// it cannot while any connection holds a read snapshot that uses the WAL: a test's way to see
/// that nothing in the server keeps a snapshot open (a held snapshot lets the WAL grow without end).
public enum WALCheckpoint {
    /// Runs `PRAGMA wal_checkpoint(RESTART)` on a connection of its own, without waiting; true
    /// when it completed (no reader was using the WAL, no writer was writing).
    /// - Throws: `TestFailure` when the database cannot be opened or is not in WAL mode.
    public static func restartSucceeds(databasePath: String) throws -> Bool {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(databasePath, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let handle else {
            sqlite3_close(handle)
            throw TestFailure("cannot open \(databasePath)")
        }
        defer { sqlite3_close(handle) }
        // A first read makes the connection open the WAL; until then it is "not in WAL mode".
        guard sqlite3_exec(handle, "SELECT count(*) FROM sqlite_schema", nil, nil, nil) == SQLITE_OK else {
            throw TestFailure("cannot read \(databasePath): \(String(cString: sqlite3_errmsg(handle)))")
        }
        var logFrames: Int32 = 0
        var checkpointed: Int32 = 0
        let status = sqlite3_wal_checkpoint_v2(handle, "main", SQLITE_CHECKPOINT_RESTART, &logFrames, &checkpointed)
        guard logFrames >= 0 else { throw TestFailure("\(databasePath) is not in WAL mode") }
        return status == SQLITE_OK
    }
}
