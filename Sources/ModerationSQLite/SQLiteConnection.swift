internal import CSQLite
internal import CSQLiteWAL
internal import Moderation

/// One SQLite connection with its cache of prepared statements.
///
/// Opened in multi-thread mode (`SQLITE_OPEN_NOMUTEX`): SQLite takes no lock per call, so a
/// connection must be used by one thread at a time — the writer owns its connection, and a
/// reader's connection belongs to one read between checkout and checkin.
final class SQLiteConnection {
    let handle: OpaquePointer
    private var statements: [SQLiteStatement?]
    private var adHoc: [String: SQLiteStatement] = [:]

    /// Turns SQLite's memory statistics off once per process, before the first connection: with
    /// them on, every allocation takes a global mutex that every connection contends for.
    private static let configured: Bool = csqlite_config_memstatus(0) == SQLITE_OK

    /// The VFS every connection opens through: the default one, with each commit's WAL frames
    /// written in one system call instead of two per frame (CSQLiteWAL).
    private static let walVFS: Result<String, ModerationError> = {
        let status = csqlitewal_register()
        guard status == SQLITE_OK else { return .failure(.storage("cannot register the SQLite VFS (\(status))")) }
        return .success(CSQLITEWAL_VFS_NAME)
    }()

    init(path: String, readOnly: Bool) throws(ModerationError) {
        _ = Self.configured
        let vfs = try Self.walVFS.get()
        var handle: OpaquePointer?
        let flags =
            (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
            | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let status = sqlite3_open_v2(path, &handle, flags, vfs)
        guard status == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)
            throw .storage("cannot open \(path): \(message) (\(status))")
        }
        self.handle = handle
        statements = Array(repeating: nil, count: Query.allCases.count)
        // Refuse to run SQL a tampered schema could smuggle in, and writes that corrupt.
        _ = csqlite_db_config_int(handle, SQLITE_DBCONFIG_DEFENSIVE, 1)
        _ = csqlite_db_config_int(handle, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0)
        sqlite3_extended_result_codes(handle, 1)
    }

    deinit {
        statements.removeAll()
        adHoc.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs SQL text (several statements allowed) without results.
    func exec(_ sql: String) throws(ModerationError) {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        guard status == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? "error \(status)"
            sqlite3_free(message)
            throw .storage("\(text) (\(status)) in: \(sql.prefix(120))")
        }
    }

    /// The cached prepared statement of `query`.
    func statement(_ query: Query) throws(ModerationError) -> SQLiteStatement {
        if let statement = statements[query.rawValue] { return statement }
        let statement = try prepare(query.sql)
        statements[query.rawValue] = statement
        return statement
    }

    /// A cached prepared statement for SQL built at run time from a small, fixed set of shapes.
    func statement(sql: String) throws(ModerationError) -> SQLiteStatement {
        if let statement = adHoc[sql] { return statement }
        let statement = try prepare(sql)
        adHoc[sql] = statement
        return statement
    }

    /// Runs `body` with the statement of `query`, resetting it afterwards.
    func run<T>(_ query: Query, _ body: (SQLiteStatement) throws(ModerationError) -> T) throws(ModerationError) -> T {
        let statement = try statement(query)
        defer { statement.reset() }
        return try body(statement)
    }

    /// Runs `query`, a statement that returns no rows, with `parameters` as ?1, ?2, ….
    func execute<each Parameter: SQLiteParameter>(_ query: Query, _ parameters: repeat each Parameter)
        throws(ModerationError)
    {
        try run(query) { (statement) throws(ModerationError) in
            statement.bind(from: 1, repeat each parameters)
            try statement.execute()
        }
    }

    /// The first row `query` returns with `parameters` as ?1, ?2, …, read with `decode`; nil when
    /// it returns none.
    func row<Row, each Parameter: SQLiteParameter>(
        _ query: Query, _ parameters: repeat each Parameter, decode: (SQLiteStatement) throws(ModerationError) -> Row
    ) throws(ModerationError) -> Row? {
        try run(query) { (statement) throws(ModerationError) -> Row? in
            statement.bind(from: 1, repeat each parameters)
            return try statement.row(decode)
        }
    }

    /// Every row `query` returns with `parameters` as ?1, ?2, …, each read with `decode`.
    func rows<Row, each Parameter: SQLiteParameter>(
        _ query: Query, _ parameters: repeat each Parameter, decode: (SQLiteStatement) throws(ModerationError) -> Row
    ) throws(ModerationError) -> [Row] {
        try run(query) { (statement) throws(ModerationError) -> [Row] in
            statement.bind(from: 1, repeat each parameters)
            return try statement.rows(decode)
        }
    }

    /// The value of a one-row, one-integer PRAGMA or query.
    func integer(_ sql: String) throws(ModerationError) -> Int64 {
        let statement = try prepare(sql)
        defer { statement.reset() }
        guard try statement.step() else { return 0 }
        return statement.int64(0)
    }

    /// Rows the last INSERT, UPDATE or DELETE that finished on this connection changed.
    var changes: Int { Int(sqlite3_changes64(handle)) }

    /// The rowid of the last row inserted on this connection.
    var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// True while a transaction is open on this connection.
    var inTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Rows inserted, updated or deleted on this connection since it opened, by every statement
    /// that finished (one that failed changed nothing and counts nothing; one still running
    /// counts once `finishRunningStatements` has reset it).
    var totalChanges: Int64 { sqlite3_total_changes64(handle) }

    /// Resets every statement still running on this connection: its changes are then counted in
    /// `totalChanges`, and COMMIT, which refuses while a write runs, can go ahead.
    func finishRunningStatements() {
        var next = sqlite3_next_stmt(handle, nil)
        while let statement = next {
            if sqlite3_stmt_busy(statement) != 0 { sqlite3_reset(statement) }
            next = sqlite3_next_stmt(handle, statement)
        }
    }

    func error(_ code: Int32, _ context: String) -> ModerationError {
        .storage("sqlite \(context): \(String(cString: sqlite3_errmsg(handle))) (\(code))")
    }

    private func prepare(_ sql: String) throws(ModerationError) -> SQLiteStatement {
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else { throw error(status, "prepare \(sql.prefix(80))") }
        return SQLiteStatement(handle: statement, connection: self)
    }
}
