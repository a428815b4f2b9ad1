import ProtoSchema

/// JSON the tests read (rpc-probe's envelopes, bench reports and events, the server's JSON log
/// lines), parsed with the project's own strict parser and walked with subscripts; a missing
/// member or element reads as absent, not a crash.
public struct JSON: CustomStringConvertible {
    private let value: JSONValue?

    private init(_ value: JSONValue?) { self.value = value }

    /// Parses one complete JSON text.
    /// - Throws: `TestFailure` naming the text when it is not JSON.
    public init(parsing text: String) throws {
        let bytes = Array(text.utf8)
        let parsed = bytes.withUnsafeBytes { raw in Result { () throws(ProtoSchemaError) in try JSONParser.parse(raw) }
        }
        guard case .success(let value) = parsed else { throw TestFailure("not JSON: \(text)") }
        self.value = value
    }

    public subscript(key: String) -> JSON {
        guard case .object(let members)? = value else { return JSON(nil) }
        return JSON(members.first { $0.key == key }?.value)
    }

    public subscript(index: Int) -> JSON {
        guard case .array(let elements)? = value, elements.indices.contains(index) else { return JSON(nil) }
        return JSON(elements[index])
    }

    public var exists: Bool { value != nil }

    public var isNull: Bool {
        if case .null? = value { return true }
        return false
    }

    public var string: String? {
        guard case .string(let text)? = value else { return nil }
        return text
    }

    /// A number's literal text.
    public var number: String? {
        guard case .number(let literal)? = value else { return nil }
        return literal
    }

    public var int: Int? { number.flatMap { Int($0) } }

    public var double: Double? { number.flatMap { Double($0) } }

    public var bool: Bool? {
        guard case .bool(let flag)? = value else { return nil }
        return flag
    }

    public var array: [JSON] {
        guard case .array(let elements)? = value else { return [] }
        return elements.map(JSON.init)
    }

    /// An object's member names, in order.
    public var keys: [String] {
        guard case .object(let members)? = value else { return [] }
        return members.map(\.key)
    }

    public var description: String {
        guard let value else { return "(absent)" }
        return "\(value)"
    }
}
