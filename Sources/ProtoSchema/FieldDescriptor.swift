/// A field of a message type: its name, number, type and cardinality.
///
/// Everything a codec needs to place a value on the wire or in JSON is here: the JSON name,
/// whether the field is a map, packed, or tracks presence, and the descriptor of its message or
/// enum type.
public struct FieldDescriptor: Sendable, Hashable, CustomStringConvertible {
    /// The message type the field belongs to.
    public let containingMessage: MessageDescriptor
    let index: Int

    init(message: MessageDescriptor, index: Int) {
        self.containingMessage = message
        self.index = index
    }

    var info: SchemaStorage.FieldInfo { containingMessage.info.fields[index] }

    /// The name in the .proto, e.g. "joined_at".
    public var name: String { info.name }
    /// The JSON name: `json_name` from the descriptor, else the lowerCamelCase name ("joinedAt").
    public var jsonName: String { info.jsonName }
    /// The field number.
    public var number: Int32 { info.number }
    /// Optional, required or repeated (a map is repeated).
    public var label: FieldLabel { info.label }
    /// The type of the field's values (for a map, `.message`: its entry type).
    public var type: FieldType { info.type }
    /// True when the field holds a list (or a map).
    public var isRepeated: Bool { info.label == .repeated }
    /// True for a `map<K, V>` field.
    public var isMap: Bool { info.isMap }
    /// True when a repeated numeric field is written packed.
    public var isPacked: Bool { info.isPacked }
    /// True for a field declared with proto3's `optional` keyword.
    public var isProto3Optional: Bool { info.proto3Optional }
    /// True when "set to the zero value" differs from "not set": sub-messages, oneof members,
    /// `optional` fields (and proto2 scalars).
    public var hasPresence: Bool { info.hasPresence }
    /// The comment written before the field, without the `//` markers.
    public var leadingComments: String? { info.comments }

    /// The message type of a message field (for a map, the entry type).
    public var messageType: MessageDescriptor? {
        info.messageIndex.map { MessageDescriptor(storage: containingMessage.storage, index: $0) }
    }

    /// The enum type of an enum field.
    public var enumType: EnumDescriptor? {
        info.enumIndex.map { EnumDescriptor(storage: containingMessage.storage, index: $0) }
    }

    /// The key field of a map's entry type.
    public var mapKey: FieldDescriptor? {
        guard info.isMap, let entry = messageType else { return nil }
        return entry.field(number: 1)
    }

    /// The value field of a map's entry type.
    public var mapValue: FieldDescriptor? {
        guard info.isMap, let entry = messageType else { return nil }
        return entry.field(number: 2)
    }

    /// The (real) oneof the field is a member of.
    public var containingOneof: OneofDescriptor? {
        guard let oneof = info.oneofIndex, !containingMessage.info.oneofs[oneof].isSynthetic else { return nil }
        return OneofDescriptor(message: containingMessage, index: oneof)
    }

    /// The fully-qualified name, e.g. "moderation.v1.User.joined_at".
    public var fullName: String { "\(containingMessage.fullName).\(info.name)" }

    public var description: String { fullName }
}
