/// Reads protobuf's text format (the format of `protoc --decode`, and of grpcurl's
/// `-format text`) into a tree of fields that `TextFormatDecoder` then fits to a message type.
///
/// The grammar, as protobuf's own parsers read it: `name: value` for a scalar (the colon may be
/// left out before a message), `name { … }` or `name < … >` for a message, `name: [a, b]` for
/// several values of a repeated field, fields separated by white space, `,` or `;`, `#` comments.
/// Scalars: strings in single or double quotes with C escapes (adjacent strings join), integers
/// in decimal, hex (`0x1F`) or octal (`017`), floats (`1.5`, `1e3`, `2.5f`, `inf`, `nan`) and
/// identifiers (enum names, `true`, `false`). Extensions and `Any` expansion (`[type/url]`) are
/// not read.
struct TextFormatParser {
    /// One field as written.
    struct Field {
        var name: String
        var value: Value
        /// Where the field's name starts, for messages.
        var line: Int
        var column: Int
    }

    /// A value as written, before its field's type decides what it means.
    indirect enum Value {
        /// A string literal's bytes, escapes decoded.
        case string([UInt8])
        /// A number, in decimal (integers from hex and octal converted) or as a float literal.
        case number(String)
        /// A bare word, with its sign: `GROUP_TYPE_PUBLIC`, `true`, `-inf`.
        case identifier(String)
        case message([Field])
        case list([Value])
    }

    private let bytes: [UInt8]
    private var offset = 0
    private var line = 1
    private var lineStart = 0

    private init(_ text: String) { bytes = Array(text.utf8) }

    /// The fields of the top-level message in `text`.
    /// - Throws: `.invalidTextFormat` with the line and column of what could not be read.
    static func parse(_ text: String, maximumDepth: Int = DynamicMessage.defaultMaximumDepth) throws(ProtoSchemaError)
        -> [Field]
    {
        var parser = TextFormatParser(text)
        let fields = try parser.fields(closedBy: nil, depth: 0, maximumDepth: maximumDepth)
        return fields
    }

    // MARK: - Structure

    private mutating func fields(closedBy terminator: UInt8?, depth: Int, maximumDepth: Int) throws(ProtoSchemaError)
        -> [Field]
    {
        guard depth <= maximumDepth else { throw failure("messages nested more than \(maximumDepth) deep") }
        var fields: [Field] = []
        while true {
            skipSpace()
            guard let byte = peek else {
                if let terminator {
                    throw failure("expected \(Self.show(terminator)) to close the message, got the end")
                }
                return fields
            }
            if byte == terminator {
                offset += 1
                return fields
            }
            fields.append(try field(depth: depth, maximumDepth: maximumDepth))
            skipSpace()
            if peek == UInt8(ascii: ",") || peek == UInt8(ascii: ";") { offset += 1 }
        }
    }

    private mutating func field(depth: Int, maximumDepth: Int) throws(ProtoSchemaError) -> Field {
        let (fieldLine, fieldColumn) = (line, offset - lineStart + 1)
        if peek == UInt8(ascii: "[") {
            throw failure("extensions and Any expansion ([…]) are not supported; give the fields by name")
        }
        guard let name = identifier() else { throw failure("expected a field name, got \(found)") }
        skipSpace()
        let value: Value
        if peek == UInt8(ascii: ":") {
            offset += 1
            skipSpace()
            value = try self.value(depth: depth, maximumDepth: maximumDepth, listAllowed: true)
        } else if let open = peek, open == UInt8(ascii: "{") || open == UInt8(ascii: "<") {
            value = try message(depth: depth, maximumDepth: maximumDepth)
        } else {
            throw failure("expected ':' or '{' after field name \(name), got \(found)")
        }
        return Field(name: name, value: value, line: fieldLine, column: fieldColumn)
    }

    private mutating func value(depth: Int, maximumDepth: Int, listAllowed: Bool) throws(ProtoSchemaError) -> Value {
        switch peek {
        case UInt8(ascii: "{"), UInt8(ascii: "<"):
            return try message(depth: depth, maximumDepth: maximumDepth)
        case UInt8(ascii: "[") where listAllowed:
            offset += 1
            var elements: [Value] = []
            skipSpace()
            if peek == UInt8(ascii: "]") {
                offset += 1
                return .list([])
            }
            while true {
                skipSpace()
                elements.append(try value(depth: depth, maximumDepth: maximumDepth, listAllowed: false))
                skipSpace()
                if peek == UInt8(ascii: ",") {
                    offset += 1
                } else if peek == UInt8(ascii: "]") {
                    offset += 1
                    return .list(elements)
                } else {
                    throw failure("expected ',' or ']' in the list, got \(found)")
                }
            }
        default:
            return try scalar()
        }
    }

    private mutating func message(depth: Int, maximumDepth: Int) throws(ProtoSchemaError) -> Value {
        let close = bytes[offset] == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: ">")
        offset += 1
        return .message(try fields(closedBy: close, depth: depth + 1, maximumDepth: maximumDepth))
    }

    // MARK: - Scalars

    private mutating func scalar() throws(ProtoSchemaError) -> Value {
        guard let byte = peek else { throw failure("expected a value, got the end") }
        if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
            var joined: [UInt8] = []
            while let quote = peek, quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") {
                joined += try string()
                skipSpace()
            }
            return .string(joined)
        }
        var sign = ""
        if byte == UInt8(ascii: "-") {
            sign = "-"
            offset += 1
            skipSpace()
        }
        if let word = identifier() { return .identifier(sign + word) }
        guard let first = peek, Self.isDigit(first) || first == UInt8(ascii: ".") else {
            throw failure("expected a value, got \(found)")
        }
        return .number(sign + (try number()))
    }

    /// A number token in decimal: hex and octal integers converted, float suffixes dropped.
    private mutating func number() throws(ProtoSchemaError) -> String {
        let start = offset
        while let byte = peek {
            let previous = offset > start ? bytes[offset - 1] : 0
            let exponentSign =
                (byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-"))
                && (previous == UInt8(ascii: "e") || previous == UInt8(ascii: "E"))
                && !(bytes[start] == UInt8(ascii: "0") && offset > start + 1
                    && (bytes[start + 1] | 0x20) == UInt8(ascii: "x"))
            guard Self.isWordByte(byte) || byte == UInt8(ascii: ".") || exponentSign else { break }
            offset += 1
        }
        let token = String(decoding: bytes[start..<offset], as: UTF8.self)
        let lower = token.lowercased()
        if lower.hasPrefix("0x") {
            guard let value = UInt64(lower.dropFirst(2), radix: 16) else {
                throw failure("\(token) is not a number", at: start)
            }
            return String(value)
        }
        let isFloat = lower.contains(".") || lower.contains("e") || lower.hasSuffix("f")
        if !isFloat {
            if lower.count > 1, lower.hasPrefix("0") {
                guard let value = UInt64(lower.dropFirst(), radix: 8) else {
                    throw failure("\(token) is not a number", at: start)
                }
                return String(value)
            }
            guard UInt64(lower) != nil || lower.allSatisfy(Self.isDigitCharacter) else {
                throw failure("\(token) is not a number", at: start)
            }
            return lower
        }
        var literal = lower.hasSuffix("f") ? String(lower.dropLast()) : lower
        if literal.hasPrefix(".") { literal = "0" + literal }
        if literal.hasSuffix(".") { literal += "0" }
        literal = literal.replacingDotBeforeExponent()
        guard Double(literal) != nil else { throw failure("\(token) is not a number", at: start) }
        return literal
    }

    /// A quoted string (the quote at `offset`), escapes decoded, as bytes.
    private mutating func string() throws(ProtoSchemaError) -> [UInt8] {
        let start = offset
        let quote = bytes[offset]
        offset += 1
        var out: [UInt8] = []
        while true {
            guard let byte = peek, byte != UInt8(ascii: "\n") else {
                throw failure("the string is not closed on its line", at: start)
            }
            offset += 1
            if byte == quote { return out }
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                continue
            }
            guard let escaped = peek else { throw failure("the string is not closed", at: start) }
            offset += 1
            switch escaped {
            case UInt8(ascii: "n"): out.append(10)
            case UInt8(ascii: "r"): out.append(13)
            case UInt8(ascii: "t"): out.append(9)
            case UInt8(ascii: "a"): out.append(7)
            case UInt8(ascii: "b"): out.append(8)
            case UInt8(ascii: "f"): out.append(12)
            case UInt8(ascii: "v"): out.append(11)
            case UInt8(ascii: "\\"), UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "?"): out.append(escaped)
            case UInt8(ascii: "0")...UInt8(ascii: "7"):
                var value = Int(escaped - UInt8(ascii: "0"))
                for _ in 0..<2 {
                    guard let digit = peek, (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(digit) else { break }
                    value = value * 8 + Int(digit - UInt8(ascii: "0"))
                    offset += 1
                }
                guard value <= 255 else { throw failure("the octal escape \\\(value) is over \\377", at: offset - 4) }
                out.append(UInt8(value))
            case UInt8(ascii: "x"), UInt8(ascii: "u"), UInt8(ascii: "U"):
                let digits = escaped == UInt8(ascii: "x") ? 2 : escaped == UInt8(ascii: "u") ? 4 : 8
                var value: UInt32 = 0
                var count = 0
                while count < digits, let digit = peek, let nibble = Self.hexValue(digit) {
                    value = value << 4 | UInt32(nibble)
                    offset += 1
                    count += 1
                }
                guard count > 0, escaped == UInt8(ascii: "x") || count == digits else {
                    throw failure(
                        "\\\(Character(Unicode.Scalar(escaped))) needs \(digits) hex digits", at: offset - count - 2)
                }
                if escaped == UInt8(ascii: "x") {
                    out.append(UInt8(value))
                } else {
                    guard let scalar = Unicode.Scalar(value) else {
                        throw failure(
                            "U+\(String(value, radix: 16, uppercase: true)) is not a character", at: offset - count - 2)
                    }
                    out += Array(String(Character(scalar)).utf8)
                }
            default:
                throw failure("unknown escape \\\(Character(Unicode.Scalar(escaped)))", at: offset - 2)
            }
        }
    }

    // MARK: - Bytes

    private var peek: UInt8? { offset < bytes.count ? bytes[offset] : nil }

    private mutating func identifier() -> String? {
        guard let first = peek, Self.isWordByte(first), !Self.isDigit(first) else { return nil }
        let start = offset
        while let byte = peek, Self.isWordByte(byte) { offset += 1 }
        return String(decoding: bytes[start..<offset], as: UTF8.self)
    }

    private mutating func skipSpace() {
        while let byte = peek {
            if byte == UInt8(ascii: "#") {
                while let next = peek, next != UInt8(ascii: "\n") { offset += 1 }
            } else if byte == UInt8(ascii: "\n") {
                offset += 1
                line += 1
                lineStart = offset
            } else if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r") {
                offset += 1
            } else {
                return
            }
        }
    }

    /// What is at `offset`, for messages: a character, or "the end".
    private var found: String {
        guard let byte = peek else { return "the end" }
        if byte < 0x80 { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "a byte 0x\(String(byte, radix: 16))"
    }

    private func failure(_ reason: String, at position: Int? = nil) -> ProtoSchemaError {
        let at = position ?? offset
        var atLine = 1
        var atLineStart = 0
        for index in 0..<min(at, bytes.count) where bytes[index] == UInt8(ascii: "\n") {
            atLine += 1
            atLineStart = index + 1
        }
        return ProtoSchemaError(
            code: .invalidTextFormat,
            message: "invalid text format at line \(atLine) column \(at - atLineStart + 1): \(reason)")
    }

    private static func show(_ byte: UInt8) -> String { "'\(Character(Unicode.Scalar(byte)))'" }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private static func isDigitCharacter(_ character: Character) -> Bool { ("0"..."9").contains(character) }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || byte == UInt8(ascii: "_")
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension String {
    /// "1.e5" as "1.0e5": a float literal text format allows and `Double` does not.
    fileprivate func replacingDotBeforeExponent() -> String {
        guard let e = firstIndex(of: "e"), e > startIndex, self[index(before: e)] == "." else { return self }
        return String(self[..<e]) + "0" + String(self[e...])
    }
}
