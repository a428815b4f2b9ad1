internal import Moderation
internal import Synchronization

/// Read-only connections for snapshot reads: a stack of idle sessions; when it is empty a new
/// connection is opened rather than waiting, and when it is full a returned one is closed.
final class ReaderPool: Sendable {
    private let idle = Mutex<[SQLiteSession]>([])
    private let open: @Sendable () throws(ModerationError) -> SQLiteSession
    private let maxIdle: Int

    init(maxIdle: Int, open: @escaping @Sendable () throws(ModerationError) -> SQLiteSession) {
        self.maxIdle = maxIdle
        self.open = open
    }

    func checkout() throws(ModerationError) -> SQLiteSession {
        if let session = idle.withLock({ $0.popLast() }) { return session }
        return try open()
    }

    func checkin(_ session: SQLiteSession) {
        idle.withLock { sessions in
            if sessions.count < maxIdle { sessions.append(session) }
        }
    }

    /// Closes every idle connection.
    func drain() {
        idle.withLock { $0.removeAll() }
    }
}
