internal import Moderation
internal import ThreadSupport

/// Reader connections: up to `size` open, lent to one read at a time; a read waits for one when
/// all are busy (each is a server process, so their number is bounded, unlike SQLite's).
///
/// A connection found broken is dropped at checkin; the next read that needs one opens a new one,
/// so readers come back by themselves once PostgreSQL does.
final class ReaderPool: Sendable {
    private struct State: Sendable {
        var idle: [PostgresSession] = []
        var open = 0
        var closed = false
    }

    private enum Claim {
        case session(PostgresSession)
        case open
        case closed
    }

    private let state = ConditionLock(State())
    private let size: Int
    private let connect: @Sendable () throws(ModerationError) -> PostgresSession
    /// Told when a broken connection is dropped: the server may have gone away.
    private let lost: @Sendable () -> Void

    init(
        size: Int, connect: @escaping @Sendable () throws(ModerationError) -> PostgresSession,
        lost: @escaping @Sendable () -> Void = {}
    ) {
        self.size = max(1, size)
        self.connect = connect
        self.lost = lost
    }

    /// An idle connection, or a new one; `reused` says which.
    func checkout() throws(ModerationError) -> (session: PostgresSession, reused: Bool) {
        let size = size
        let claim = state.withLock(when: { !$0.idle.isEmpty || $0.open < size || $0.closed }) { state -> Claim in
            if state.closed { return .closed }
            if let session = state.idle.popLast() { return .session(session) }
            state.open += 1
            return .open
        }
        switch claim {
        case .closed:
            throw .storage("the store is closed")
        case .session(let session):
            return (session, true)
        case .open:
            do {
                return (try connect(), false)
            } catch {
                state.withLock { $0.open -= 1 }
                state.signal()
                throw error
            }
        }
    }

    /// Returns a connection; a broken one is closed instead.
    func checkin(_ session: PostgresSession) {
        let keep = !session.connection.isBroken
        state.withLock { state in
            if keep && !state.closed {
                state.idle.append(session)
            } else {
                state.open -= 1
            }
        }
        state.signal()
        if !keep { lost() }
    }

    /// Closes the idle connections and refuses new reads (the store is closing).
    func drain() {
        state.withLock { state in
            state.closed = true
            state.open -= state.idle.count
            state.idle.removeAll()
        }
        state.broadcast()
    }
}
