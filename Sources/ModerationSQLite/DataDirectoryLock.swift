internal import Glibc
internal import Moderation
internal import Synchronization

/// The exclusive lock that lets one store at a time open a data directory.
///
/// Two stores on one database each believe their writer is SQLite's only one: each caches what it
/// wrote (the writer's cache, the first member pages) and numbers the action log from its own
/// count, so a write through one is invisible to the other's caches, the next action's seq
/// collides (`UNIQUE constraint failed: actions.id`) and event watchers skip a seq. SQLite's own
/// locks serialise transactions, not those assumptions. The lock belongs to the store rather than
/// to the server's process because any process opening the store (an embedder, a tool) is as
/// dangerous as a second server; `SQLiteBackup`, which only reads, does not take it.
///
/// It is `flock(LOCK_EX | LOCK_NB)` on `<directory>/moderation.lock`, held by an open descriptor
/// while the store is open. The kernel drops it when the descriptor closes, including when the
/// process exits or is killed, so a file left by a crash never blocks a start: only the pid
/// written into it is stale, and the next holder overwrites it. A flock belongs to the open file
/// description, so a second store in the same process is refused too.
public final class DataDirectoryLock: Sendable {
    /// The lock file's name inside the data directory.
    public static let fileName = "moderation.lock"
    /// The key of `ModerationError.details` naming the pid that holds the lock (or "unknown" when
    /// the file has none yet), set when a store is refused because another one has the directory
    /// open.
    public static let holderDetail = "lock_holder_pid"

    /// `<directory>/moderation.lock`.
    public let path: String
    /// The descriptor holding the lock; -1 once released.
    private let descriptor: Atomic<Int32>

    /// Takes the lock on `directory` (which must exist) and writes this process's pid into it.
    /// - Throws: `ModerationError` (`ERR_INTERNAL`) when another store holds it — the message names
    ///   the holder's pid, also in `details[holderDetail]` — or when the file cannot be opened or
    ///   locked.
    init(directory: String) throws(ModerationError) {
        path = directory + "/" + Self.fileName
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else {
            throw .storage("cannot open the lock file \(path): \(String(cString: strerror(errno)))")
        }
        var status: Int32
        repeat {
            status = flock(fd, LOCK_EX | LOCK_NB)
        } while status != 0 && errno == EINTR
        guard status == 0 else {
            let code = errno
            defer { close(fd) }
            guard code == EWOULDBLOCK else {
                throw .storage("cannot lock \(path): \(String(cString: strerror(code)))")
            }
            throw Self.inUse(path: path, holder: Self.holder(fd))
        }
        // The pid is for the message of the next process refused; the lock itself is the flock,
        // so a failed write only makes that message vaguer.
        let text = Array("\(getpid())\n".utf8)
        if ftruncate(fd, 0) == 0 {
            _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        }
        descriptor = Atomic(fd)
    }

    deinit {
        release()
    }

    /// Gives the lock up (idempotent). The pid stays in the file: it is only read by a process
    /// refused the lock, which a released lock no longer refuses.
    public func release() {
        let fd = descriptor.exchange(-1, ordering: .acquiringAndReleasing)
        if fd >= 0 { close(fd) }
    }

    /// The pid in the lock file. The holder writes it just after locking, so a process refused in
    /// between may find the file empty: it looks again for a little while.
    private static func holder(_ fd: Int32) -> Int32? {
        for _ in 0..<20 {
            var bytes = [UInt8](repeating: 0, count: 32)
            let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
            if count > 0, let pid = Int32(String(decoding: bytes[0..<count], as: UTF8.self).trimmedLine), pid > 0 {
                return pid
            }
            usleep(5_000)
        }
        return nil
    }

    private static func inUse(path: String, holder: Int32?) -> ModerationError {
        guard let holder else {
            return ModerationError(
                .internal, "the store is open in another process, which holds the lock \(path)",
                details: [holderDetail: "unknown"])
        }
        let name = processName(holder).map { " (\($0))" } ?? ""
        return ModerationError(
            .internal, "the store is open in process \(holder)\(name), which holds the lock \(path)",
            details: [holderDetail: "\(holder)"])
    }

    /// The name of `pid`'s program: the last component of its first argument
    /// (`/proc/PID/cmdline`; `comm` would cut "moderation-server" to 15 characters).
    private static func processName(_ pid: Int32) -> String? {
        let fd = open("/proc/\(pid)/cmdline", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 256)
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let program = bytes[0..<count].prefix { $0 != 0 }
        let name = String(decoding: program.split(separator: UInt8(ascii: "/")).last ?? program[...], as: UTF8.self)
        return name.isEmpty ? nil : name
    }
}

extension String {
    /// The text without surrounding spaces and newlines.
    fileprivate var trimmedLine: String {
        String(drop(while: { $0.isWhitespace }).reversed().drop(while: { $0.isWhitespace }).reversed())
    }
}
