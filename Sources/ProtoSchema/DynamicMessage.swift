/// A protobuf message of a type known only at run time, from its `MessageDescriptor`.
///
/// `rpc-probe` builds requests from JSON and prints replies for servers it was not compiled
/// against; a dynamic message is the value in between. It encodes and decodes the protobuf wire
/// format (`DynamicMessage+Wire.swift`) and proto3 JSON (`DynamicMessage+JSON.swift`).
///
/// Values follow proto3 semantics: a field without presence that holds its zero value is simply
/// not set (so a decoded explicit zero and an absent field are equal), setting a member of a
/// oneof clears the others, and an empty list or map is the same as none.
public struct DynamicMessage: Sendable, Equatable, CustomStringConvertible {
    /// The message's type.
    public let descriptor: MessageDescriptor
    /// One slot per field, in declaration order; nil when the field is not set.
    var values: [ProtoValue?]

    /// Nesting deeper than this is refused by the decoders (and would overflow no stack).
    public static let defaultMaximumDepth = 100

    /// An empty message of `descriptor`'s type: every field unset.
    public init(_ descriptor: MessageDescriptor) {
        self.descriptor = descriptor
        self.values = Array(repeating: nil, count: descriptor.info.fields.count)
    }

    init(_ descriptor: MessageDescriptor, values: [ProtoValue?]) {
        self.descriptor = descriptor
        self.values = values
    }

    /// The field's value when it is set, else nil.
    public subscript(field: FieldDescriptor) -> ProtoValue? {
        guard field.containingMessage == descriptor else { return nil }
        return values[field.index]
    }

    /// The value of the field named `name` (proto or JSON name) when it is set, else nil.
    public subscript(name: String) -> ProtoValue? {
        guard let field = descriptor.field(named: name) else { return nil }
        return values[field.index]
    }

    /// True when the field is set (for fields without presence: holds a non-zero value).
    public func has(_ field: FieldDescriptor) -> Bool {
        self[field] != nil
    }

    /// The field's value, or its default when unset: the zero value, an empty list or map, or
    /// an empty message.
    public func value(of field: FieldDescriptor) -> ProtoValue {
        if let value = self[field] { return value }
        if field.isMap { return .map([:]) }
        if field.isRepeated { return .list([]) }
        if let zero = ProtoValue.zero(of: field.type) { return zero }
        return .message(DynamicMessage(field.messageType!))
    }

    /// The member of `oneof` that is set, if any.
    public func setField(of oneof: OneofDescriptor) -> FieldDescriptor? {
        oneof.info.fieldIndices.first { values[$0] != nil }.map { FieldDescriptor(message: descriptor, index: $0) }
    }

    /// Every set field with its value, in declaration order.
    public var populatedFields: [(field: FieldDescriptor, value: ProtoValue)] {
        values.indices.compactMap { index in
            values[index].map { (FieldDescriptor(message: descriptor, index: index), $0) }
        }
    }

    /// Sets a field, checking that the value fits its type.
    ///
    /// A zero value clears a field without presence; setting a oneof member clears the others.
    /// - Throws: `ProtoSchemaError` (`.invalidValue`) when the field is of another message
    ///   type or the value is of the wrong kind.
    public mutating func set(_ field: FieldDescriptor, to value: ProtoValue) throws(ProtoSchemaError) {
        guard field.containingMessage == descriptor else {
            throw ProtoSchemaError(
                code: .invalidValue, message: "\(field.fullName) is not a field of \(descriptor.fullName)")
        }
        if let problem = Self.problem(with: value, for: field.info, storage: descriptor.storage) {
            throw ProtoSchemaError(
                code: .invalidValue, message: "field \"\(field.name)\" of \(descriptor.fullName): \(problem)")
        }
        store(value, at: field.index)
    }

    /// Sets the field named `name` (proto or JSON name); see `set(_:to:)`.
    public mutating func set(_ name: String, to value: ProtoValue) throws(ProtoSchemaError) {
        guard let field = descriptor.field(named: name) else {
            throw ProtoSchemaError(
                code: .invalidValue, message: "\(descriptor.fullName) has no field named \"\(name)\"")
        }
        try set(field, to: value)
    }

    /// Unsets a field.
    public mutating func clear(_ field: FieldDescriptor) {
        guard field.containingMessage == descriptor else { return }
        values[field.index] = nil
    }

    /// The message as compact proto3 JSON.
    public var description: String { jsonString(options: JSONFormatOptions(pretty: false)) }

    public static func == (lhs: DynamicMessage, rhs: DynamicMessage) -> Bool {
        lhs.descriptor == rhs.descriptor && lhs.values == rhs.values
    }

    /// Stores an already checked value, applying proto3's presence and oneof rules.
    mutating func store(_ value: ProtoValue?, at index: Int) {
        let field = descriptor.info.fields[index]
        guard let value, field.hasPresence || !value.isZero else {
            values[index] = nil
            return
        }
        if let oneof = field.oneofIndex {
            for member in descriptor.info.oneofs[oneof].fieldIndices where member != index {
                values[member] = nil
            }
        }
        values[index] = value
    }

    /// Why `value` cannot be the value of `field`, or nil when it can.
    static func problem(with value: ProtoValue, for field: SchemaStorage.FieldInfo, storage: SchemaStorage) -> String? {
        if field.isMap {
            guard case .map(let entries) = value else { return "expected a map, got \(value.kindDescription)" }
            let entry = storage.messages[field.messageIndex!]
            let keyField = entry.fields[entry.fieldByNumber[1]!]
            let valueField = entry.fields[entry.fieldByNumber[2]!]
            for (key, entryValue) in entries {
                guard key.value.fits(keyField.type) else {
                    return "map key \(key) is \(key.value.kindDescription), expected a \(keyField.type) key"
                }
                if let problem = singleProblem(with: entryValue, for: valueField, storage: storage) {
                    return "map value for key \(key): \(problem)"
                }
            }
            return nil
        }
        if field.isRepeated {
            guard case .list(let elements) = value else { return "expected a list, got \(value.kindDescription)" }
            for (i, element) in elements.enumerated() {
                if let problem = singleProblem(with: element, for: field, storage: storage) {
                    return "element \(i): \(problem)"
                }
            }
            return nil
        }
        return singleProblem(with: value, for: field, storage: storage)
    }

    private static func singleProblem(
        with value: ProtoValue, for field: SchemaStorage.FieldInfo, storage: SchemaStorage
    ) -> String? {
        guard value.fits(field.type) else {
            let expected =
                field.type == .message || field.type == .enum ? "\(field.type) \(field.typeName)" : "\(field.type)"
            return "expected a value of type \(expected), got \(value.kindDescription)"
        }
        if case .message(let message) = value,
            message.descriptor.storage !== storage || message.descriptor.index != field.messageIndex
        {
            return "expected a \(field.typeName) message, got a \(message.descriptor.fullName) message"
        }
        return nil
    }
}
