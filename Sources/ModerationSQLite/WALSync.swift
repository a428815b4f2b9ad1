internal import Glibc
internal import Moderation

/// Makes committed transactions durable by syncing the WAL file, away from the writer.
///
/// SQLite runs with `synchronous=NORMAL`: a COMMIT writes its frames to the WAL but does not
/// fsync. The completer calls `sync()` once for every group of committed batches before it
/// reports any of them, so every write is reported done only after the frames of its commit are
/// on disk — what `synchronous=FULL` guarantees — while the writer already runs the next batch.
/// SQLite itself still syncs the WAL header when it reuses the file and the database around
/// checkpoints.
final class WALSync: Sendable {
    private let descriptor: Int32

    /// Opens the WAL file of `databasePath` (it exists once the database is in WAL mode) and
    /// makes its directory entry durable.
    init(databasePath: String, directory: String) throws(ModerationError) {
        descriptor = open(databasePath + "-wal", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .storage("cannot open the WAL of \(databasePath): errno \(errno)") }
        let folder = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
    }

    deinit {
        close(descriptor)
    }

    /// Flushes the WAL to disk; false when the flush failed.
    func sync() -> Bool {
        while fdatasync(descriptor) != 0 {
            if errno != EINTR { return false }
        }
        return true
    }
}
