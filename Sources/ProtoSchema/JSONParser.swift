/// A strict RFC 8259 JSON parser over UTF-8 bytes.
///
/// The JSON typed by `rpc-probe` users is the input here, so every rejection says where (line and
/// column) and what was expected. Strings are checked for valid UTF-8 and `\u` escapes, surrogate
/// pairs included, are decoded exactly; lone surrogates are refused. Nesting is limited so that
/// hostile input cannot exhaust the stack.
public struct JSONParser {
    /// Arrays and objects nested deeper than this are refused.
    static let maximumNesting = 512

    private struct Failure: Error {
        let offset: Int
        let reason: String
    }

    private let bytes: UnsafeRawBufferPointer
    private var offset = 0
    private var depth = 0

    private init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Parses a complete JSON text (one value, surrounded by optional whitespace).
    /// - Throws: `ProtoSchemaError` (`.invalidJSON`): "invalid JSON at line L column C: …".
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(ProtoSchemaError) -> JSONValue {
        var parser = JSONParser(bytes)
        do throws(Failure) {
            parser.skipWhitespace()
            let value = try parser.value()
            parser.skipWhitespace()
            guard parser.offset == bytes.count else {
                throw Failure(offset: parser.offset, reason: "unexpected \(parser.found()) after the JSON value")
            }
            return value
        } catch {
            let (line, column) = position(of: error.offset, in: bytes)
            throw ProtoSchemaError(
                code: .invalidJSON, message: "invalid JSON at line \(line) column \(column): \(error.reason)")
        }
    }

    /// The 1-based line and column (in characters) of a byte offset.
    private static func position(of offset: Int, in bytes: UnsafeRawBufferPointer) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for byte in bytes[..<min(offset, bytes.count)] {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }

    // MARK: - Values

    private mutating func value() throws(Failure) -> JSONValue {
        guard offset < bytes.count else {
            throw Failure(offset: offset, reason: "expected a value, got the end of the input")
        }
        switch bytes[offset] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw Failure(offset: offset, reason: "expected a value, got \(found())")
        }
    }

    private mutating func object() throws(Failure) -> JSONValue {
        try enterNesting()
        offset += 1 // {
        var members: [(key: String, value: JSONValue)] = []
        if closesEmpty(with: UInt8(ascii: "}")) { return .object(members) }
        repeat {
            skipWhitespace()
            guard peek(UInt8(ascii: "\"")) else {
                throw Failure(offset: offset, reason: "expected a member name in double quotes, got \(found())")
            }
            let key = try string()
            skipWhitespace()
            guard peek(UInt8(ascii: ":")) else {
                throw Failure(
                    offset: offset,
                    reason: "expected ':' after the member name \(JSONWriter.quoted(key)), got \(found())")
            }
            offset += 1
            skipWhitespace()
            members.append((key, try value()))
        } while try continues(closedBy: UInt8(ascii: "}"), after: "an object member")
        return .object(members)
    }

    private mutating func array() throws(Failure) -> JSONValue {
        try enterNesting()
        offset += 1 // [
        var elements: [JSONValue] = []
        if closesEmpty(with: UInt8(ascii: "]")) { return .array(elements) }
        repeat {
            skipWhitespace()
            elements.append(try value())
        } while try continues(closedBy: UInt8(ascii: "]"), after: "an array element")
        return .array(elements)
    }

    /// Right after an array's or object's opening byte: true when `close` follows at once, the
    /// container is empty and its nesting left.
    private mutating func closesEmpty(with close: UInt8) -> Bool {
        skipWhitespace()
        guard peek(close) else { return false }
        offset += 1
        depth -= 1
        return true
    }

    /// After an element of an array or an object (`what`): true for a comma, another follows;
    /// false for `close`, the container ended and its nesting left.
    private mutating func continues(closedBy close: UInt8, after what: String) throws(Failure) -> Bool {
        skipWhitespace()
        if peek(UInt8(ascii: ",")) {
            offset += 1
            return true
        }
        guard peek(close) else {
            throw Failure(
                offset: offset,
                reason: "expected ',' or '\(Character(Unicode.Scalar(close)))' after \(what), got \(found())")
        }
        offset += 1
        depth -= 1
        return false
    }

    private mutating func enterNesting() throws(Failure) {
        depth += 1
        guard depth <= Self.maximumNesting else {
            throw Failure(offset: offset, reason: "arrays and objects nested more than \(Self.maximumNesting) deep")
        }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let start = offset
        let expected = UnsafeRawBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        for byte in expected {
            guard offset < bytes.count, bytes[offset] == byte else {
                throw Failure(offset: start, reason: "expected a value, got \(found(at: start))")
            }
            offset += 1
        }
    }

    /// A number literal, checked against the JSON grammar, as text.
    private mutating func number() throws(Failure) -> String {
        let start = offset
        guard let end = Self.numberEnd(bytes, from: start) else {
            var bad = start
            while bad < bytes.count, Self.isNumberByte(bytes[bad]) { bad += 1 }
            throw Failure(
                offset: start,
                reason: "invalid number \(JSONWriter.quoted(String(decoding: bytes[start..<bad], as: UTF8.self)))")
        }
        offset = end
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
            UInt8(ascii: "e"), UInt8(ascii: "E"):
            true
        default: false
        }
    }

    /// Where the JSON number starting at `start` ends, or nil when it breaks the grammar
    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` (or runs into more number bytes).
    static func numberEnd<Bytes: RandomAccessCollection<UInt8>>(_ array: Bytes, from start: Int) -> Int?
    where Bytes.Index == Int {
        var i = start
        func digits() -> Int {
            let begin = i
            while i < array.endIndex, array[i] >= UInt8(ascii: "0"), array[i] <= UInt8(ascii: "9") { i += 1 }
            return i - begin
        }
        if i < array.endIndex, array[i] == UInt8(ascii: "-") { i += 1 }
        guard i < array.endIndex else { return nil }
        if array[i] == UInt8(ascii: "0") {
            i += 1
        } else if digits() == 0 {
            return nil
        }
        if i < array.endIndex, array[i] == UInt8(ascii: ".") {
            i += 1
            guard digits() > 0 else { return nil }
        }
        if i < array.endIndex, array[i] == UInt8(ascii: "e") || array[i] == UInt8(ascii: "E") {
            i += 1
            if i < array.endIndex, array[i] == UInt8(ascii: "+") || array[i] == UInt8(ascii: "-") { i += 1 }
            guard digits() > 0 else { return nil }
        }
        if i < array.endIndex, isNumberByte(array[i]) { return nil } // "01", "1.2.3", "1e5e"
        return i
    }

    /// True when `text` is exactly one JSON number literal.
    static func isNumberLiteral(_ text: String) -> Bool {
        numberEnd(Array(text.utf8), from: 0) == text.utf8.count
    }

    /// A string literal (the opening quote at `offset`), escapes decoded.
    private mutating func string() throws(Failure) -> String {
        let start = offset
        offset += 1
        var utf8: [UInt8] = []
        while true {
            guard offset < bytes.count else { throw Failure(offset: start, reason: "string is not closed") }
            let byte = bytes[offset]
            switch byte {
            case UInt8(ascii: "\""):
                offset += 1
                guard let string = String(validating: utf8, as: UTF8.self) else {
                    throw Failure(offset: start, reason: "string is not valid UTF-8")
                }
                return string
            case UInt8(ascii: "\\"):
                try escape(into: &utf8)
            case 0..<0x20:
                throw Failure(
                    offset: offset,
                    reason: "control character U+\(Self.hex(UInt32(byte), width: 4)) in a string must be escaped")
            default:
                utf8.append(byte)
                offset += 1
            }
        }
    }

    private mutating func escape(into utf8: inout [UInt8]) throws(Failure) {
        let start = offset
        offset += 1 // backslash
        guard offset < bytes.count else { throw Failure(offset: start, reason: "string is not closed") }
        let byte = bytes[offset]
        offset += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(byte)
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hexQuad(escapeStart: start)
            if (0xD800...0xDBFF).contains(scalar) {
                guard offset + 1 < bytes.count, bytes[offset] == UInt8(ascii: "\\"),
                    bytes[offset + 1] == UInt8(ascii: "u")
                else {
                    throw Failure(
                        offset: start,
                        reason: "\\u\(Self.hex(scalar, width: 4)) is a high surrogate without a low surrogate after it")
                }
                let lowStart = offset
                offset += 2
                let low = try hexQuad(escapeStart: lowStart)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw Failure(
                        offset: lowStart,
                        reason: "\\u\(Self.hex(low, width: 4)) after a high surrogate is not a low surrogate")
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw Failure(
                    offset: start,
                    reason: "\\u\(Self.hex(scalar, width: 4)) is a low surrogate without a high surrogate before it")
            }
            utf8.append(contentsOf: Unicode.UTF8.encode(Unicode.Scalar(scalar)!)!)
        default:
            throw Failure(
                offset: start,
                reason: "invalid escape sequence \(JSONWriter.quoted("\\" + String(decoding: [byte], as: UTF8.self)))")
        }
    }

    private mutating func hexQuad(escapeStart: Int) throws(Failure) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard offset < bytes.count, let digit = Self.hexDigit(bytes[offset]) else {
                throw Failure(offset: escapeStart, reason: "\\u must be followed by four hexadecimal digits")
            }
            value = value << 4 | digit
            offset += 1
        }
        return value
    }

    private static func hexDigit(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    static func hex(_ value: UInt32, width: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    // MARK: - Helpers

    private mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): offset += 1
            default: return
            }
        }
    }

    private func peek(_ byte: UInt8) -> Bool {
        offset < bytes.count && bytes[offset] == byte
    }

    /// The character at `at` for an error message: `'x'`, or "the end of the input".
    private func found(at position: Int? = nil) -> String {
        let position = position ?? offset
        guard position < bytes.count else { return "the end of the input" }
        var end = position + 1
        while end < bytes.count, end - position < 4, bytes[end] & 0xC0 == 0x80 { end += 1 }
        let text = String(decoding: bytes[position..<end], as: UTF8.self)
        if let scalar = text.unicodeScalars.first, scalar.value < 0x20 {
            return "U+\(Self.hex(scalar.value, width: 4))"
        }
        return "'\(text)'"
    }
}
