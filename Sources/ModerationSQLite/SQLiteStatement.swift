internal import CSQLite
internal import Moderation

/// A prepared statement: typed binds, stepping, typed column reads.
///
/// Owned by one `SQLiteConnection` and used by one thread at a time. Callers reset it when done
/// (`SQLiteConnection.run` does) so that it holds no read lock between uses.
final class SQLiteStatement {
    private static let transient = csqlite_transient()

    let handle: OpaquePointer
    private unowned let connection: SQLiteConnection

    init(handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(handle)
    }

    func bind(_ index: Int32, _ value: Int64) {
        sqlite3_bind_int64(handle, index, value)
    }

    func bind(_ index: Int32, _ value: Int) {
        sqlite3_bind_int64(handle, index, Int64(value))
    }

    func bind(_ index: Int32, _ value: UInt64) {
        sqlite3_bind_int64(handle, index, Int64(bitPattern: value))
    }

    func bind(_ index: Int32, _ value: String) {
        var value = value
        value.withUTF8 { bytes in
            if let base = bytes.baseAddress {
                _ = base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                    sqlite3_bind_text(handle, index, $0, Int32(bytes.count), Self.transient)
                }
            } else {
                sqlite3_bind_text(handle, index, "", 0, Self.transient)
            }
        }
    }

    func bind(_ index: Int32, _ value: String?) {
        if let value { bind(index, value) } else { bindNull(index) }
    }

    func bind(_ index: Int32, _ value: Int64?) {
        if let value { bind(index, value) } else { bindNull(index) }
    }

    /// Binds `parameters` in order to ?`first`, the next, and so on.
    func bind<each Parameter: SQLiteParameter>(from first: Int32, _ parameters: repeat each Parameter) {
        var index = first
        for parameter in repeat each parameters {
            parameter.bind(to: self, at: index)
            index += 1
        }
    }

    func bindNull(_ index: Int32) {
        sqlite3_bind_null(handle, index)
    }

    func bind(_ index: Int32, blob: [UInt8]) {
        if blob.isEmpty {
            sqlite3_bind_zeroblob(handle, index, 0)
        } else {
            _ = blob.withUnsafeBytes {
                sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), Self.transient)
            }
        }
    }

    /// Steps once: true when a row is available, false when done.
    func step() throws(ModerationError) -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code: throw connection.error(code, "step")
        }
    }

    /// Steps a statement that returns no rows.
    func execute() throws(ModerationError) {
        _ = try step()
    }

    /// The next row, read with `decode`; nil when there is none.
    func row<Row>(_ decode: (SQLiteStatement) throws(ModerationError) -> Row) throws(ModerationError) -> Row? {
        try step() ? try decode(self) : nil
    }

    /// Every row left, each read with `decode`.
    func rows<Row>(
        reservingCapacity capacity: Int = 0, _ decode: (SQLiteStatement) throws(ModerationError) -> Row
    ) throws(ModerationError) -> [Row] {
        var rows: [Row] = []
        rows.reserveCapacity(capacity)
        while try step() { rows.append(try decode(self)) }
        return rows
    }

    func reset() {
        sqlite3_reset(handle)
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(handle, column)) }
    func uint64(_ column: Int32) -> UInt64 { UInt64(bitPattern: sqlite3_column_int64(handle, column)) }
    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func optionalInt(_ column: Int32) -> Int? { isNull(column) ? nil : int(column) }

    func string(_ column: Int32) -> String {
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    func optionalString(_ column: Int32) -> String? { isNull(column) ? nil : string(column) }

    func blob(_ column: Int32) -> [UInt8] {
        guard let bytes = sqlite3_column_blob(handle, column) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, column))
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }
}

/// A value a statement's parameter takes: an integer, a flag (1 or 0), text, bytes (a blob), or
/// nil (NULL).
protocol SQLiteParameter {
    func bind(to statement: SQLiteStatement, at index: Int32)
}

extension Int64: SQLiteParameter {
    func bind(to statement: SQLiteStatement, at index: Int32) { statement.bind(index, self) }
}

extension Int: SQLiteParameter {
    func bind(to statement: SQLiteStatement, at index: Int32) { statement.bind(index, self) }
}

extension UInt64: SQLiteParameter {
    func bind(to statement: SQLiteStatement, at index: Int32) { statement.bind(index, self) }
}

extension Bool: SQLiteParameter {
    func bind(to statement: SQLiteStatement, at index: Int32) { statement.bind(index, self ? 1 : 0) }
}

extension String: SQLiteParameter {
    func bind(to statement: SQLiteStatement, at index: Int32) { statement.bind(index, self) }
}

/// Bytes bind as a blob.
extension Array: SQLiteParameter where Element == UInt8 {
    func bind(to statement: SQLiteStatement, at index: Int32) { statement.bind(index, blob: self) }
}

extension Optional: SQLiteParameter where Wrapped: SQLiteParameter {
    func bind(to statement: SQLiteStatement, at index: Int32) {
        if let self { self.bind(to: statement, at: index) } else { statement.bindNull(index) }
    }
}
