/// Prints dynamic messages in protobuf's text format, as `protoc --decode` does: fields in
/// declaration order under their proto names, `name: value` for scalars and `name { … }` for
/// messages, a repeated field once per element, a map as one `{ key: … value: … }` entry per key
/// (sorted), enums by name (a number the enum does not name, as a number), strings in double
/// quotes with C escapes (UTF-8 kept as it is), bytes with octal escapes for what is not
/// printable ASCII, floats in their shortest exact form (`inf`, `-inf`, `nan`).
///
/// Multi-line with two-space indents, or (`singleLine`) all on one line, as protobuf's
/// `ShortDebugString` — one stream message a line.
struct TextFormatEncoder {
    private let singleLine: Bool
    private let emitDefaults: Bool
    private var output = ""
    private var depth = 0
    /// True before the first field of the current line (single-line: before the first field).
    private var atStart = true

    static func encode(_ message: DynamicMessage, singleLine: Bool, emitDefaults: Bool) -> String {
        var encoder = TextFormatEncoder(singleLine: singleLine, emitDefaults: emitDefaults)
        encoder.fields(of: message)
        return encoder.output
    }

    private init(singleLine: Bool, emitDefaults: Bool) {
        self.singleLine = singleLine
        self.emitDefaults = emitDefaults
    }

    private mutating func fields(of message: DynamicMessage) {
        let info = message.descriptor.info
        let storage = message.descriptor.storage
        for (index, field) in info.fields.enumerated() {
            if let value = message.values[index] {
                self.field(field, value, storage: storage)
            } else if emitDefaults, field.oneofIndex == nil, !field.isRepeated,
                let zero = ProtoValue.zero(of: field.type)
            {
                self.field(field, zero, storage: storage)
            }
        }
    }

    private mutating func field(_ field: SchemaStorage.FieldInfo, _ value: ProtoValue, storage: SchemaStorage) {
        switch value {
        case .list(let elements):
            for element in elements { single(field.name, element, of: field, storage: storage) }
        case .map(let entries):
            let entry = storage.messages[field.messageIndex!]
            let keyField = entry.fields[entry.fieldByNumber[1]!]
            let valueField = entry.fields[entry.fieldByNumber[2]!]
            for key in entries.keys.sorted() {
                open(field.name)
                single("key", key.value, of: keyField, storage: storage)
                single("value", entries[key]!, of: valueField, storage: storage)
                close()
            }
        default:
            single(field.name, value, of: field, storage: storage)
        }
    }

    private mutating func single(
        _ name: String, _ value: ProtoValue, of field: SchemaStorage.FieldInfo, storage: SchemaStorage
    ) {
        if case .message(let message) = value {
            open(name)
            fields(of: message)
            close()
            return
        }
        let text: String
        switch value {
        case .bool(let v): text = v ? "true" : "false"
        case .int32(let v): text = String(v)
        case .int64(let v): text = String(v)
        case .uint32(let v): text = String(v)
        case .uint64(let v): text = String(v)
        case .float(let v): text = Self.floatingPoint(Double(v), description: v.description)
        case .double(let v): text = Self.floatingPoint(v, description: v.description)
        case .string(let v): text = Self.quoted(Array(v.utf8), keepUTF8: true)
        case .bytes(let v): text = Self.quoted(v, keepUTF8: false)
        case .enumNumber(let v):
            if let enumIndex = field.enumIndex, let valueIndex = storage.enums[enumIndex].valueByNumber[v] {
                text = storage.enums[enumIndex].values[valueIndex].name
            } else {
                text = String(v)
            }
        case .message, .list, .map:
            preconditionFailure("messages are opened above; lists and maps hold single values")
        }
        line(name + ": " + text)
    }

    private mutating func open(_ name: String) {
        line(name + " {")
        depth += 1
    }

    private mutating func close() {
        depth -= 1
        line("}")
    }

    private mutating func line(_ text: String) {
        if singleLine {
            // "a { b: 1 }": a space between items, none after an opening brace's line start.
            if !atStart { output += " " }
            output += text
        } else {
            if !atStart { output += "\n" }
            output += String(repeating: "  ", count: depth) + text
        }
        atStart = false
    }

    private static func floatingPoint(_ value: Double, description: String) -> String {
        if value.isNaN { return "nan" }
        if value.isInfinite { return value < 0 ? "-inf" : "inf" }
        return description
    }

    /// `bytes` in double quotes: `"`, `\` and control characters escaped (`\n`, `\t`, octal);
    /// bytes past ASCII kept when `keepUTF8` (a string field's UTF-8), else octal.
    static func quoted(_ bytes: [UInt8], keepUTF8: Bool) -> String {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""): out += Array(#"\""#.utf8)
            case UInt8(ascii: "\\"): out += Array(#"\\"#.utf8)
            case 10: out += Array(#"\n"#.utf8)
            case 13: out += Array(#"\r"#.utf8)
            case 9: out += Array(#"\t"#.utf8)
            case 0x20..<0x7F: out.append(byte)
            case 0x80...0xFF where keepUTF8: out.append(byte)
            default:
                let octal = String(byte, radix: 8)
                out += Array(("\\" + String(repeating: "0", count: 3 - octal.count) + octal).utf8)
            }
        }
        out.append(UInt8(ascii: "\""))
        return String(decoding: out, as: UTF8.self)
    }
}
