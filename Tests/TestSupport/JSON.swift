import TestSupport

@testable import ProtoSchema

/// rpc-probe's JSON output (envelopes, bench reports, events), read with the project's own strict
/// parser and walked with subscripts; a missing member or element reads as absent, not a crash.
struct JSON: CustomStringConvertible {
    private let value: JSONValue?

    private init(_ value: JSONValue?) { self.value = value }

    /// Parses one complete JSON text.
    /// - Throws: `TestFailure` naming the text when it is not JSON.
    init(parsing text: String) throws {
        let bytes = Array(text.utf8)
        let parsed = bytes.withUnsafeBytes { raw in Result { () throws(ProtoSchemaError) in try JSONParser.parse(raw) }
        }
        guard case .success(let value) = parsed else { throw TestFailure("not JSON: \(text)") }
        self.value = value
    }

    subscript(key: String) -> JSON {
        guard case .object(let members)? = value else { return JSON(nil) }
        return JSON(members.first { $0.key == key }?.value)
    }

    subscript(index: Int) -> JSON {
        guard case .array(let elements)? = value, elements.indices.contains(index) else { return JSON(nil) }
        return JSON(elements[index])
    }

    var exists: Bool { value != nil }

    var isNull: Bool {
        if case .null? = value { return true }
        return false
    }

    var string: String? {
        guard case .string(let text)? = value else { return nil }
        return text
    }

    /// A number's literal text.
    var number: String? {
        guard case .number(let literal)? = value else { return nil }
        return literal
    }

    var int: Int? { number.flatMap { Int($0) } }

    var double: Double? { number.flatMap { Double($0) } }

    var bool: Bool? {
        guard case .bool(let flag)? = value else { return nil }
        return flag
    }

    var array: [JSON] {
        guard case .array(let elements)? = value else { return [] }
        return elements.map(JSON.init)
    }

    /// An object's member names, in order.
    var keys: [String] {
        guard case .object(let members)? = value else { return [] }
        return members.map(\.key)
    }

    var description: String {
        guard let value else { return "(absent)" }
        return "\(value)"
    }
}
