internal import Moderation

/// A statement that failed on the server, or a connection that was lost: what libpq said, and
/// which write sent the statement (the writer uses it to know whose failure it is).
struct PGFailure: Sendable, Equatable {
    /// The five-character SQLSTATE ("" when libpq reported no code, e.g. for a lost connection).
    let sqlstate: String
    let message: String
    /// `PGConnection.tag` when the statement was sent: the index of the write in the batch, or
    /// -1 outside a write.
    let tag: Int
    /// The connection is gone (or unusable): every statement on it has failed.
    let connectionLost: Bool

    /// A failure that says nothing about the write itself and goes away when it runs again:
    /// serialization failure, deadlock detected, lock not available.
    var isTransient: Bool { ["40001", "40P01", "55P03"].contains(sqlstate) }

    /// The server cannot serve (connection errors, shutting down, too many connections).
    var isUnavailable: Bool {
        connectionLost || sqlstate.hasPrefix("08") || sqlstate.hasPrefix("57P") || sqlstate == "53300"
    }

    /// The domain's view: `ERR_STORE_UNAVAILABLE` when PostgreSQL cannot be reached, else a
    /// storage failure (`ERR_INTERNAL`).
    var error: ModerationError {
        if isUnavailable { return .storeUnavailable("PostgreSQL: \(message)") }
        return .storage("PostgreSQL: \(message) (SQLSTATE \(sqlstate))")
    }
}
