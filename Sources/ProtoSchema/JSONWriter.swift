import ByteCoding

/// Builds JSON text: escaped strings, numbers in proto3 JSON's forms, and the layout (compact,
/// or pretty with two-space indentation).
///
/// Output must be deterministic (tests and users diff it), so the writer decides every byte:
/// member separators and indentation here; escapes and the forms of numbers in `JSONText`
/// (ByteCoding), which the generated encoders (`writeJSON(into:)`) share.
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
        JSONText.appendQuoted(string, to: &output)
    }

    /// Appends JSON text that `append` writes (`JSONText`'s integers, numbers, base64).
    mutating func append(_ write: (inout [UInt8]) -> Void) {
        write(&output)
    }

    /// `string` as a JSON string literal (for error messages too).
    static func quoted(_ string: String) -> String {
        var out: [UInt8] = []
        JSONText.appendQuoted(string, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
