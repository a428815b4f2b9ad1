import Synchronization

/// Open connections per app, against the per-app cap (`--max-connections-per-app`): one tenant
/// cannot take every connection (and the memory each costs) the server will hold.
///
/// A connection counts from its accepted HELLO until it closes. A lock guards the counts: it is
/// taken once at HELLO and once at close, never on a call's path.
public final class AppConnections: Sendable {
    /// Connections one app may hold open.
    public let limit: Int
    private let counts = Mutex<[String: Int]>([:])

    public init(limit: Int) {
        self.limit = limit
    }

    /// Counts a new connection of `app` when the app is under its cap.
    /// - Returns: false (and nothing counted) when the app already has `limit` connections.
    public func open(app: String) -> Bool {
        counts.withLock { counts in
            let current = counts[app, default: 0]
            guard current < limit else { return false }
            counts[app] = current + 1
            return true
        }
    }

    /// A connection counted by `open(app:)` closed.
    public func close(app: String) {
        counts.withLock { counts in
            let remaining = counts[app, default: 0] - 1
            counts[app] = remaining > 0 ? remaining : nil
        }
    }

    /// The connections `app` holds now.
    public func count(app: String) -> Int { counts.withLock { $0[app, default: 0] } }
}
