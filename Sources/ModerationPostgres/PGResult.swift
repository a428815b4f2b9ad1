internal import CLibPQ

/// The rows of one statement's result, freed with the value.
///
/// The store asks for binary results (integers arrive as big-endian 2, 4 or 8 bytes, text as its
/// UTF-8 bytes, `bytea` as is); the few statements run with the simple protocol (`PGConnection.exec`)
/// come back as text, which the readers parse. A NULL reads as 0, "" or [] unless asked with
/// `isNull`.
final class PGResult {
    // Invariant: owned by one thread at a time, like the connection it came from; freed once.
    private let handle: OpaquePointer

    init(_ handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        PQclear(handle)
    }

    var rowCount: Int { Int(PQntuples(handle)) }

    /// Rows an INSERT, UPDATE or DELETE changed (0 for other statements).
    var changedRows: Int64 { Int64(String(cString: PQcmdTuples(handle))) ?? 0 }

    func isNull(_ row: Int, _ column: Int) -> Bool {
        PQgetisnull(handle, Int32(row), Int32(column)) != 0
    }

    func int64(_ row: Int, _ column: Int) -> Int64 {
        guard !isNull(row, column) else { return 0 }
        let length = Int(PQgetlength(handle, Int32(row), Int32(column)))
        let value = PQgetvalue(handle, Int32(row), Int32(column))!
        guard PQfformat(handle, Int32(column)) == 1 else {
            return Int64(String(cString: value)) ?? 0
        }
        var number: Int64 = 0
        let bytes = UnsafeRawPointer(value).assumingMemoryBound(to: UInt8.self)
        for index in 0..<length { number = number << 8 | Int64(bytes[index]) }
        // Sign-extend the narrower integer types (smallint, integer).
        if length < 8, length > 0 {
            let shift = Int64(64 - 8 * length)
            number = (number << shift) >> shift
        }
        return number
    }

    func int(_ row: Int, _ column: Int) -> Int { Int(int64(row, column)) }

    func uint64(_ row: Int, _ column: Int) -> UInt64 { UInt64(clamping: int64(row, column)) }

    func optionalInt(_ row: Int, _ column: Int) -> Int? { isNull(row, column) ? nil : int(row, column) }

    func string(_ row: Int, _ column: Int) -> String {
        guard !isNull(row, column) else { return "" }
        let length = Int(PQgetlength(handle, Int32(row), Int32(column)))
        let value = PQgetvalue(handle, Int32(row), Int32(column))!
        return String(decoding: UnsafeRawBufferPointer(start: value, count: length), as: UTF8.self)
    }

    func optionalString(_ row: Int, _ column: Int) -> String? { isNull(row, column) ? nil : string(row, column) }

    func bytes(_ row: Int, _ column: Int) -> [UInt8] {
        guard !isNull(row, column) else { return [] }
        let length = Int(PQgetlength(handle, Int32(row), Int32(column)))
        let value = PQgetvalue(handle, Int32(row), Int32(column))!
        return [UInt8](UnsafeRawBufferPointer(start: value, count: length))
    }

    /// A one-dimensional `text[]` in binary form (NULL elements read as "").
    func strings(_ row: Int, _ column: Int) -> [String] {
        elements(row, column) { String(decoding: $0, as: UTF8.self) }
    }

    /// A one-dimensional `bigint[]` in binary form (NULL elements read as 0).
    func int64s(_ row: Int, _ column: Int) -> [Int64] {
        elements(row, column) { bytes in bytes.reduce(Int64(0)) { $0 << 8 | Int64($1) } }
    }

    /// The elements of a one-dimensional array in binary form, each decoded from its bytes (a
    /// NULL element from none).
    private func elements<Element>(_ row: Int, _ column: Int, _ decode: (UnsafeRawBufferPointer) -> Element)
        -> [Element]
    {
        guard !isNull(row, column) else { return [] }
        let length = Int(PQgetlength(handle, Int32(row), Int32(column)))
        let value = PQgetvalue(handle, Int32(row), Int32(column))!
        let bytes = UnsafeRawBufferPointer(start: value, count: length)
        func int32(at offset: Int) -> Int {
            guard offset + 4 <= bytes.count else { return 0 }
            let raw =
                UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
                | UInt32(bytes[offset + 3])
            return Int(Int32(bitPattern: raw))
        }
        // Header: dimensions, has-nulls flag, element type; per dimension: size, lower bound.
        guard int32(at: 0) == 1 else { return [] }
        let count = int32(at: 12)
        var offset = 20
        var elements: [Element] = []
        elements.reserveCapacity(max(0, count))
        for _ in 0..<max(0, count) {
            let size = int32(at: offset)
            offset += 4
            guard size >= 0, offset + size <= bytes.count else {
                elements.append(decode(UnsafeRawBufferPointer(start: nil, count: 0)))
                continue
            }
            elements.append(decode(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + size])))
            offset += size
        }
        return elements
    }

    func bool(_ row: Int, _ column: Int) -> Bool {
        guard !isNull(row, column) else { return false }
        let value = PQgetvalue(handle, Int32(row), Int32(column))!
        if PQfformat(handle, Int32(column)) == 1 { return value.pointee != 0 }
        return value.pointee == CChar(UInt8(ascii: "t"))
    }
}
