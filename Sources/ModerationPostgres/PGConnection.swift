internal import CLibPQ
internal import Glibc
internal import Moderation

/// One libpq connection, in pipeline mode: statements are sent without waiting, and results are
/// read back in order at the next synchronization point.
///
/// `query` sends a statement and waits for it (one round trip, together with everything sent
/// before it). `send` only queues: a write's INSERTs and UPDATEs, whose results nobody reads,
/// travel with the next statement that needs an answer, so a write costs one round trip per
/// read it makes instead of one per statement. A statement that fails surfaces at the next
/// `query` or `sync` as the connection's `failure`, tagged with the write that sent it (`tag`).
///
/// Used by one thread at a time (the writer owns its connections; a reader's belongs to one
/// read between checkout and checkin).
final class PGConnection {
    /// What a result read back belongs to.
    private enum Pending {
        case prepare(Statement)
        case command(tag: Int, keep: Bool)
        /// A statement whose outcome does not matter (a wake-up sent after COMMIT), or its
        /// preparation (`prepares`): its failure, and a connection lost from there to the
        /// synchronization point, are not reported.
        case optional(prepares: Statement?)
        case sync
    }

    struct Options: Sendable {
        var url: String
        /// The schema the store's tables live in (`search_path`).
        var schema: String
        var applicationName: String
        /// How long connecting may take before it fails (libpq's `connect_timeout`).
        var connectTimeoutSeconds: Int
    }

    private let handle: OpaquePointer
    private let url: String
    private var prepared = Set<Statement>()
    private var pending: [Pending] = []
    /// The write the next statements belong to (its index in the batch), -1 for none.
    var tag = -1
    /// The first failure since `clearFailure`, whether thrown or met while draining.
    private(set) var failure: PGFailure?
    /// Statements sent that change rows (`Statement.changesRows`, and unprepared writes).
    private(set) var writesSent = 0
    /// True once the connection is lost: it must be thrown away.
    private(set) var isBroken = false

    /// Connects, sets the session up (schema, `synchronous_commit=on`, UTC, timeouts, no JIT)
    /// and, with `pipeline`, enters pipeline mode (without it, only `exec` may be used:
    /// migrations).
    ///
    /// JIT compilation is off: every statement here is a short lookup or write, and
    /// PostgreSQL compiles a plan whose estimated cost passes `jit_above_cost` at each execution.
    /// A misestimate did that to a one-row lookup (a group by app and guid, where many apps have
    /// that guid, estimated at 20 000 rows): 24 ms of compiling for a 0.1 ms statement.
    ///
    /// The timeouts bound what another instance can make this one wait for: a lock held longer
    /// than `lock_timeout` fails the waiting write (it is run again, as for a deadlock), and a
    /// transaction left idle by a client that stopped answering is ended by the server after
    /// `idle_in_transaction_session_timeout`, releasing its app's lock. A batch never waits on
    /// its client for anywhere near that long.
    /// - Throws: `ERR_STORE_UNAVAILABLE` when PostgreSQL cannot be reached.
    init(_ options: Options, pipeline: Bool) throws(ModerationError) {
        url = options.url
        // Defaults first: the URL's own settings, expanded from `dbname`, come later and win.
        // Keepalives and a TCP user timeout let a statement waiting on a vanished server fail
        // within a minute instead of the system's two hours.
        let keywords = [
            "connect_timeout", "application_name", "keepalives_idle", "keepalives_interval", "keepalives_count",
            "tcp_user_timeout", "dbname",
        ]
        let values = [
            String(options.connectTimeoutSeconds), options.applicationName, "15", "5", "3", "30000", options.url,
        ]
        let connection = withCStrings(keywords) { keywords in
            withCStrings(values) { values in PQconnectdbParams(keywords, values, 1) }
        }
        guard let connection else { throw .storeUnavailable("libpq could not allocate a connection") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(connection))
            PQfinish(connection)
            throw .storeUnavailable(
                "cannot connect to \(PostgresURL.redacted(options.url)): "
                    + PostgresURL.scrub(Self.oneLine(message), url: options.url))
        }
        handle = connection
        cpq_silence_notices(handle)
        do throws(ModerationError) {
            _ = try exec(
                """
                SET search_path TO \(Self.quoteIdentifier(options.schema));
                SET synchronous_commit TO on;
                SET TIME ZONE 'UTC';
                SET lock_timeout TO '10s';
                SET idle_in_transaction_session_timeout TO '60s';
                SET jit TO off
                """)
            if pipeline, PQenterPipelineMode(handle) != 1 {
                throw ModerationError.storage("libpq refused pipeline mode: \(lastMessage)")
            }
        } catch {
            PQfinish(handle)
            throw error
        }
    }

    deinit {
        PQfinish(handle)
    }

    // MARK: Pipeline

    /// Queues `statement` (preparing it first on this connection's first use); its result is
    /// read at the next synchronization point.
    /// - Parameter keep: the result is wanted (`query` returns it).
    func send(_ statement: Statement, _ parameters: [PGValue], keep: Bool = false) throws(ModerationError) {
        try requireUsable()
        if !prepared.contains(statement) {
            guard PQsendPrepare(handle, statement.name, statement.sql, 0, nil) == 1 else { throw sendFailed() }
            prepared.insert(statement)
            pending.append(.prepare(statement))
        }
        let handle = handle
        let sent = parameters.withLibPQParameters { count, values, lengths, formats in
            PQsendQueryPrepared(handle, statement.name, count, values, lengths, formats, 1)
        }
        guard sent == 1 else { throw sendFailed() }
        pending.append(.command(tag: tag, keep: keep))
        if statement.changesRows { writesSent += 1 }
    }

    /// Queues `statement` whose outcome nobody waits for and no failure is reported for: sent
    /// after a COMMIT, it must not make a committed batch look failed. A lost connection is still
    /// noticed (`isBroken`) at the next use.
    func sendOptional(_ statement: Statement, _ parameters: [PGValue]) {
        guard !isBroken, PQstatus(handle) == CONNECTION_OK else { return }
        if !prepared.contains(statement) {
            guard PQsendPrepare(handle, statement.name, statement.sql, 0, nil) == 1 else { return markBroken() }
            prepared.insert(statement)
            pending.append(.optional(prepares: statement))
        }
        let handle = handle
        let sent = parameters.withLibPQParameters { count, values, lengths, formats in
            PQsendQueryPrepared(handle, statement.name, count, values, lengths, formats, 1)
        }
        guard sent == 1 else { return markBroken() }
        pending.append(.optional(prepares: nil))
    }

    /// Queues SQL text as an unnamed statement (planned for these parameters).
    /// - Parameter changesRows: the statement writes (counts in `writesSent`).
    func send(sql: String, _ parameters: [PGValue], keep: Bool = false, changesRows: Bool = false)
        throws(ModerationError)
    {
        try requireUsable()
        let handle = handle
        let sent = parameters.withLibPQParameters { count, values, lengths, formats in
            PQsendQueryParams(handle, sql, count, nil, values, lengths, formats, 1)
        }
        guard sent == 1 else { throw sendFailed() }
        pending.append(.command(tag: tag, keep: keep))
        if changesRows { writesSent += 1 }
    }

    /// Runs `statement` and returns its rows (with everything queued before it, in one round trip).
    func query(_ statement: Statement, _ parameters: [PGValue]) throws(ModerationError) -> PGResult {
        try send(statement, parameters, keep: true)
        return try sync()!
    }

    /// Runs SQL text as an unnamed statement and returns its rows.
    func query(sql: String, _ parameters: [PGValue]) throws(ModerationError) -> PGResult {
        try send(sql: sql, parameters, keep: true)
        return try sync()!
    }

    /// Sends a synchronization point and reads every result queued, in order; returns the one
    /// `query` asked to keep.
    /// - Throws: the first failure among them (also kept in `failure`).
    @discardableResult
    func sync() throws(ModerationError) -> PGResult? {
        try requireUsable()
        guard PQpipelineSync(handle) == 1 else { throw sendFailed() }
        pending.append(.sync)
        let (kept, firstFailure) = drain()
        if let firstFailure { throw firstFailure.error }
        return kept
    }

    /// Sends a synchronization point without waiting for the results (a reader's COMMIT: the
    /// server commits at once; `settle` reads the answer before the connection's next use).
    func flush() {
        guard !isBroken, !pending.isEmpty else { return }
        if PQpipelineSync(handle) == 1 {
            pending.append(.sync)
        } else {
            markBroken()
        }
    }

    /// Reads whatever results are still due (a failure among them is recorded, not thrown).
    func settle() {
        guard !pending.isEmpty, !isBroken else { return }
        if case .sync = pending.last {
        } else {
            flush()
        }
        _ = drain()
    }

    /// Forgets the recorded failure (a new transaction starts clean).
    func clearFailure() {
        failure = nil
    }

    /// Reads every pending result up to the last synchronization point.
    private func drain() -> (PGResult?, PGFailure?) {
        var kept: PGResult?
        var first: PGFailure?
        // Past an optional statement, a failure no longer concerns what came before it.
        var optionalReached = false
        defer { pending.removeAll(keepingCapacity: true) }
        for entry in pending {
            if isBroken { break }
            switch entry {
            case .optional(let statement):
                optionalReached = true
                var ignored: PGResult?
                if readResult(tag: tag, keep: false, into: &ignored) != nil, let statement {
                    prepared.remove(statement)
                }
            case .sync:
                guard let result = PQgetResult(handle) else {
                    markBroken()
                    break
                }
                let status = PQresultStatus(result)
                PQclear(result)
                if status != PGRES_PIPELINE_SYNC { markBroken() }
            case .prepare(let statement):
                if let failure = readResult(tag: tag, keep: false, into: &kept) {
                    prepared.remove(statement)
                    first = first ?? failure
                }
            case .command(let tag, let keep):
                if let failure = readResult(tag: tag, keep: keep, into: &kept) { first = first ?? failure }
            }
        }
        if isBroken && !optionalReached {
            let lost = PGFailure(sqlstate: "", message: lastMessage, tag: tag, connectionLost: true)
            first = first.map { $0.connectionLost ? $0 : lost } ?? lost
        }
        if let first { failure = failure ?? first }
        return (kept, first)
    }

    /// Reads one statement's result and the NULL that ends it; returns its failure, if any.
    private func readResult(tag: Int, keep: Bool, into kept: inout PGResult?) -> PGFailure? {
        guard let result = PQgetResult(handle) else {
            markBroken()
            return PGFailure(sqlstate: "", message: lastMessage, tag: tag, connectionLost: true)
        }
        var failure: PGFailure?
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK:
            if keep {
                kept = PGResult(result)
            } else {
                PQclear(result)
            }
        case PGRES_PIPELINE_ABORTED:
            // Not run because an earlier statement failed: that one is the failure.
            PQclear(result)
        default:
            let sqlstate = cpq_sqlstate(result).map { String(cString: $0) } ?? ""
            let primary = cpq_primary_message(result).map { String(cString: $0) }
            let message = primary ?? Self.oneLine(String(cString: PQresultErrorMessage(result)))
            PQclear(result)
            let lost = PQstatus(handle) != CONNECTION_OK
            if lost { markBroken() }
            failure = PGFailure(
                sqlstate: sqlstate, message: PostgresURL.scrub(message, url: url), tag: tag, connectionLost: lost)
        }
        if !isBroken {
            while let extra = PQgetResult(handle) { PQclear(extra) }
        }
        return failure
    }

    // MARK: Without pipeline

    /// Runs SQL text (several statements allowed) with the simple protocol; only before the
    /// connection enters pipeline mode. Results come back as text.
    @discardableResult
    func exec(_ sql: String) throws(ModerationError) -> PGResult? {
        guard let result = PQexec(handle, sql) else { throw sendFailed() }
        return try checked(result)
    }

    /// Runs one statement with text parameters (`$1` …), unprepared; only before the connection
    /// enters pipeline mode. Results come back as text.
    @discardableResult
    func exec(_ sql: String, textParameters: [String]) throws(ModerationError) -> PGResult? {
        var copies = textParameters.map { strdup($0) }
        defer { for copy in copies { free(copy) } }
        let result = copies.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: UnsafePointer<CChar>?.self) { values in
                PQexecParams(handle, sql, Int32(values.count), nil, values.baseAddress, nil, nil, 0)
            }
        }
        guard let result else { throw sendFailed() }
        return try checked(result)
    }

    /// `result` when it succeeded; otherwise cleared, recorded and thrown.
    private func checked(_ result: OpaquePointer) throws(ModerationError) -> PGResult {
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let sqlstate = cpq_sqlstate(result).map { String(cString: $0) } ?? ""
            let message = Self.oneLine(String(cString: PQresultErrorMessage(result)))
            PQclear(result)
            let lost = PQstatus(handle) != CONNECTION_OK
            if lost { markBroken() }
            let failure = PGFailure(
                sqlstate: sqlstate, message: PostgresURL.scrub(message, url: url), tag: tag, connectionLost: lost)
            self.failure = self.failure ?? failure
            throw failure.error
        }
        return PGResult(result)
    }

    // MARK: Notifications

    /// The connection's socket, to wait on for notifications (`poll`).
    var socket: Int32 { PQsocket(handle) }

    /// Reads what arrived on the socket and returns the notifications received, as
    /// (channel, payload); only outside pipeline mode (the watcher's connection).
    /// - Throws: `ERR_STORE_UNAVAILABLE` when the connection is lost.
    func notifications() throws(ModerationError) -> [(channel: String, payload: String)] {
        guard PQconsumeInput(handle) == 1, PQstatus(handle) == CONNECTION_OK else {
            markBroken()
            throw ModerationError.storeUnavailable("the connection was lost (\(lastMessage))")
        }
        var received: [(channel: String, payload: String)] = []
        while let notification = PQnotifies(handle) {
            received.append(
                (String(cString: notification.pointee.relname), String(cString: notification.pointee.extra)))
            PQfreemem(notification)
        }
        return received
    }

    // MARK: Helpers

    /// An identifier in double quotes, for SQL text (schema names).
    static func quoteIdentifier(_ name: String) -> String {
        "\"" + name.replacing("\"", with: "\"\"") + "\""
    }

    private var lastMessage: String {
        PostgresURL.scrub(Self.oneLine(String(cString: PQerrorMessage(handle))), url: url)
    }

    private func requireUsable() throws(ModerationError) {
        if isBroken || PQstatus(handle) != CONNECTION_OK {
            markBroken()
            let lost = PGFailure(
                sqlstate: "", message: "the connection was lost (\(lastMessage))", tag: tag, connectionLost: true)
            failure = failure ?? lost
            throw lost.error
        }
    }

    private func sendFailed() -> ModerationError {
        markBroken()
        let lost = PGFailure(sqlstate: "", message: lastMessage, tag: tag, connectionLost: true)
        failure = failure ?? lost
        return lost.error
    }

    private func markBroken() {
        isBroken = true
    }

    /// libpq's multi-line messages on one line.
    private static func oneLine(_ message: String) -> String {
        let lines = message.split(whereSeparator: { $0 == "\n" }).map { $0.trimmingPrefix(while: \.isWhitespace) }
        return lines.joined(separator: " ")
    }
}

/// Calls `body` with `strings` as a NULL-terminated array of C strings.
private func withCStrings<Result>(
    _ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> Result
) -> Result {
    let copies = strings.map { strdup($0) }
    defer { for copy in copies { free(copy) } }
    let pointers = copies.map { UnsafePointer($0) } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
