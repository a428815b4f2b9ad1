internal import CLibPQ
import TestSupport

/// A plain libpq connection for tests that look into the database or hold a lock in it (the
/// store's own connection type is internal to it, and a test must not share the code it checks).
public final class PostgresTestConnection: @unchecked Sendable {
    // Invariant: used by one thread at a time (the test that opened it).
    private let handle: OpaquePointer

    /// - Throws: `TestFailure` when the database cannot be reached.
    public init(url: String) throws {
        guard let handle = PQconnectdb(url) else { throw TestFailure("libpq could not allocate a connection") }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(handle))
            PQfinish(handle)
            throw TestFailure("cannot connect to PostgreSQL: \(message)")
        }
        cpq_silence_notices(handle)
        self.handle = handle
    }

    deinit {
        PQfinish(handle)
    }

    /// Runs SQL text (several statements allowed).
    /// - Throws: `TestFailure` with PostgreSQL's message.
    public func execute(_ sql: String) throws {
        _ = try run(sql)
    }

    /// The first column of the first row of a query, as text (nil when it returns no row).
    public func value(_ sql: String) throws -> String? {
        try run(sql)
    }

    private func run(_ sql: String) throws -> String? {
        guard let result = PQexec(handle, sql) else { throw TestFailure("PQexec failed") }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw TestFailure("\(sql.prefix(80)): \(String(cString: PQresultErrorMessage(result)))")
        }
        guard status == PGRES_TUPLES_OK, PQntuples(result) > 0 else { return nil }
        return String(cString: PQgetvalue(result, 0, 0))
    }
}
