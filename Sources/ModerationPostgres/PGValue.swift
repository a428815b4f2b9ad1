/// A statement parameter as libpq sends it.
///
/// Numbers and strings go in text form, with the type left for the server to infer from the
/// statement (or a cast in it); byte strings in binary form, so a BLOB is sent as it is rather
/// than hex-escaped.
enum PGValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case text(String)
    case bytes([UInt8])

    static func int(_ value: Int64) -> PGValue { .integer(value) }

    static func int(_ value: Int) -> PGValue { .integer(Int64(value)) }

    /// A seq or revision: the schema keeps them in `bigint` columns (they never come near 2^63).
    static func int(_ value: UInt64) -> PGValue { .integer(Int64(clamping: value)) }

    static func optional(_ value: String?) -> PGValue { value.map { .text($0) } ?? .null }

    static func optional(_ value: Int?) -> PGValue { value.map { .integer(Int64($0)) } ?? .null }

    static func bool(_ value: Bool) -> PGValue { .text(value ? "true" : "false") }

    /// A `bigint[]` literal (`{1,2}`), for a parameter cast with `::bigint[]`.
    static func intArray(_ values: [Int64]) -> PGValue {
        .text("{" + values.map(String.init).joined(separator: ",") + "}")
    }

    /// An integer array literal with NULL elements (`{1,NULL}`), for a parameter cast with
    /// `::bigint[]` or `::integer[]`.
    static func intArray(_ values: [Int64?]) -> PGValue {
        .text("{" + values.map { $0.map(String.init) ?? "NULL" }.joined(separator: ",") + "}")
    }

    /// A `boolean[]` literal (`{t,f}`), for a parameter cast with `::boolean[]`.
    static func boolArray(_ values: [Bool]) -> PGValue {
        .text("{" + values.map { $0 ? "t" : "f" }.joined(separator: ",") + "}")
    }

    /// A `text[]` literal (`{"a","b"}`), for a parameter cast with `::text[]`.
    static func textArray(_ values: [String]) -> PGValue {
        textArray(values.map(Optional.some))
    }

    /// A `text[]` literal with NULL elements (`{"a",NULL}`).
    static func textArray(_ values: [String?]) -> PGValue {
        var literal = "{"
        for (index, value) in values.enumerated() {
            if index > 0 { literal += "," }
            guard let value else {
                literal += "NULL"
                continue
            }
            literal += "\""
            for character in value.unicodeScalars {
                if character == "\"" || character == "\\" { literal += "\\" }
                literal.unicodeScalars.append(character)
            }
            literal += "\""
        }
        return .text(literal + "}")
    }
}

extension [PGValue] {
    /// Calls `body` with the four parallel C arrays libpq's `PQsend…` functions take (count,
    /// values, lengths, formats), valid only during the call.
    func withLibPQParameters<Result>(
        _ body: (
            Int32, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?
        ) -> Result
    ) -> Result {
        // Every value's bytes in one buffer (text values NUL-terminated), then pointers into it.
        var storage: [UInt8] = []
        var spans: [(offset: Int, length: Int32, format: Int32, isNull: Bool)] = []
        spans.reserveCapacity(count)
        for value in self {
            let offset = storage.count
            switch value {
            case .null:
                spans.append((offset, 0, 0, true))
                continue
            case .integer(let number):
                storage += String(number).utf8
                storage.append(0)
                spans.append((offset, Int32(storage.count - offset - 1), 0, false))
            case .text(let string):
                storage += string.utf8
                storage.append(0)
                spans.append((offset, Int32(storage.count - offset - 1), 0, false))
            case .bytes(let bytes):
                storage += bytes
                spans.append((offset, Int32(bytes.count), 1, false))
            }
        }
        storage.append(0)
        return storage.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!)
            let values: [UnsafePointer<CChar>?] = spans.map { span in
                span.isNull ? nil : (base + span.offset).assumingMemoryBound(to: CChar.self)
            }
            let lengths = spans.map(\.length)
            let formats = spans.map(\.format)
            return values.withUnsafeBufferPointer { values in
                lengths.withUnsafeBufferPointer { lengths in
                    formats.withUnsafeBufferPointer { formats in
                        body(Int32(spans.count), values.baseAddress, lengths.baseAddress, formats.baseAddress)
                    }
                }
            }
        }
    }
}
