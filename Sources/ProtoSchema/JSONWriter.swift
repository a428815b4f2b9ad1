/// Builds JSON text: escaped strings, numbers in proto3 JSON's forms, and the layout (compact,
/// or pretty with two-space indentation).
///
/// Output must be deterministic (tests and users diff it), so the writer decides every byte:
/// member separators, indentation and the shortest round-tripping form of floating-point numbers.
struct JSONWriter {
    private(set) var output: [UInt8] = []
    private let pretty: Bool
    private var level = 0
    /// Per open array or object: whether a member has been written yet.
    private var hasMembers: [Bool] = []

    init(pretty: Bool) {
        self.pretty = pretty
    }

    mutating func beginObject() { begin(UInt8(ascii: "{")) }
    mutating func endObject() { end(UInt8(ascii: "}")) }
    mutating func beginArray() { begin(UInt8(ascii: "[")) }
    mutating func endArray() { end(UInt8(ascii: "]")) }

    /// Starts a member of the current object: separator, indentation, `"key": `.
    mutating func key(_ key: String) {
        separate()
        appendQuoted(key)
        output.append(UInt8(ascii: ":"))
        if pretty { output.append(UInt8(ascii: " ")) }
    }

    /// Starts an element of the current array.
    mutating func element() {
        separate()
    }

    /// Appends raw, already valid JSON text (a number or a literal).
    mutating func raw(_ text: String) {
        output.append(contentsOf: text.utf8)
    }

    mutating func string(_ string: String) {
        appendQuoted(string)
    }

    private mutating func begin(_ bracket: UInt8) {
        output.append(bracket)
        level += 1
        hasMembers.append(false)
    }

    private mutating func end(_ bracket: UInt8) {
        level -= 1
        if hasMembers.removeLast() && pretty { newline() }
        output.append(bracket)
    }

    private mutating func separate() {
        if hasMembers[hasMembers.count - 1] { output.append(UInt8(ascii: ",")) }
        hasMembers[hasMembers.count - 1] = true
        if pretty { newline() }
    }

    private mutating func newline() {
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * level))
    }

    private mutating func appendQuoted(_ string: String) {
        Self.appendQuoted(string, to: &output)
    }

    /// `string` as a JSON string literal (for error messages too).
    static func quoted(_ string: String) -> String {
        var out: [UInt8] = []
        appendQuoted(string, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private static func appendQuoted(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x08: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0..<0x20: out.append(contentsOf: "\\u\(JSONParser.hex(UInt32(byte), width: 4))".utf8)
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// A finite double in the shortest form that reads back to the same value: integers
    /// without a fraction ("3", "-0"), others as Swift prints them ("0.1", "1e-07", "1.5e+300").
    static func number(_ value: Double) -> String {
        if value == value.rounded(.towardZero) && value.magnitude < 1e15 {
            return value == 0 && value.sign == .minus ? "-0" : String(Int64(value))
        }
        return value.description
    }

    /// A finite float in the shortest form that reads back to the same `Float`.
    static func number(_ value: Float) -> String {
        if value == value.rounded(.towardZero) && value.magnitude < 1e7 {
            return value == 0 && value.sign == .minus ? "-0" : String(Int64(value))
        }
        return value.description
    }
}
