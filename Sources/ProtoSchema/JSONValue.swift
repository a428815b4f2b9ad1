/// A parsed JSON value, as the proto3 JSON mapping reads it.
///
/// Numbers keep their literal text so that 64-bit integers are converted exactly (never through
/// `Double`) and each field type can apply its own rules; objects keep their members in order,
/// duplicates included, so the mapping can refuse a field given twice.
public indirect enum JSONValue: Sendable {
    case null
    case bool(Bool)
    /// A number literal, exactly as written (already checked against the JSON grammar).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([(key: String, value: JSONValue)])

    /// What the value is, for error messages: `a string "ten"`, `a number 1.5`, `an array`.
    var summary: String {
        switch self {
        case .null: "null"
        case .bool(let value): value ? "true" : "false"
        case .number(let literal): "a number \(literal)"
        case .string(let string):
            string.count > 40
                ? "a string \(JSONWriter.quoted(String(string.prefix(40))))…" : "a string \(JSONWriter.quoted(string))"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
