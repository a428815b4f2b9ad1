internal import Moderation
internal import Synchronization

/// Fails new connections at once for a short while after one failed, so that with PostgreSQL
/// unreachable every call fails fast: only the first of them waits for libpq to give up (at
/// most `connect_timeout` when the host does not answer), the rest get its error.
final class ConnectionGate: Sendable {
    private struct Failure {
        let until: Double
        let error: ModerationError
    }

    private let failure = Mutex<Failure?>(nil)
    /// How long after a failed connection new ones are refused without trying, in seconds.
    private let pause: Double
    /// Told of each attempt's outcome (the server logs outages from it).
    private let availability: StoreAvailability

    init(pauseSeconds: Double = 0.5, availability: StoreAvailability) {
        pause = pauseSeconds
        self.availability = availability
    }

    /// A new connection, or the recent failure's error without trying.
    func connect(_ options: PGConnection.Options, pipeline: Bool) throws(ModerationError) -> PGConnection {
        let now = monotonicSeconds()
        if let recent = failure.withLock({ $0 }), recent.until > now { throw recent.error }
        do {
            let connection = try PGConnection(options, pipeline: pipeline)
            failure.withLock { $0 = nil }
            availability.connected()
            return connection
        } catch {
            failure.withLock { $0 = Failure(until: monotonicSeconds() + pause, error: error) }
            if error.code == .storeUnavailable { availability.failed(error) }
            throw error
        }
    }
}
