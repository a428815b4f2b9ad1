/// A message type of a `Schema`: its fields, oneofs and comments.
///
/// Dynamic messages carry one to know how to encode, decode and print themselves. It is a small
/// handle into the schema's tables (which it keeps alive), cheap to copy and compare.
public struct MessageDescriptor: Sendable, Hashable, CustomStringConvertible {
    let storage: SchemaStorage
    let index: Int

    var info: SchemaStorage.MessageInfo { storage.messages[index] }

    /// The fully-qualified name, e.g. "moderation.v1.User".
    public var fullName: String { info.fullName }
    /// The name within its scope, e.g. "User".
    public var name: String { info.name }
    /// The `.proto` file that declares it.
    public var fileName: String { storage.files[info.fileIndex].name }
    /// The comment written before its declaration, without the `//` markers.
    public var leadingComments: String? { info.comments }
    /// True for the synthetic `…Entry` type protoc makes for a `map<K, V>` field.
    public var isMapEntry: Bool { info.isMapEntry }

    /// The fields, in declaration order.
    public var fields: [FieldDescriptor] {
        info.fields.indices.map { FieldDescriptor(message: self, index: $0) }
    }

    /// The oneofs, in declaration order; the synthetic ones of proto3 `optional` fields excluded.
    public var oneofs: [OneofDescriptor] {
        info.oneofs.indices.filter { !info.oneofs[$0].isSynthetic }.map { OneofDescriptor(message: self, index: $0) }
    }

    /// The message types declared inside this one (map entries included).
    public var nestedMessages: [MessageDescriptor] {
        info.nestedMessages.map { MessageDescriptor(storage: storage, index: $0) }
    }

    /// The enum types declared inside this one.
    public var nestedEnums: [EnumDescriptor] {
        info.nestedEnums.map { EnumDescriptor(storage: storage, index: $0) }
    }

    /// The field with this proto name ("joined_at") or JSON name ("joinedAt").
    public func field(named name: String) -> FieldDescriptor? {
        guard let index = info.fieldByName[name] ?? info.fieldByJSONName[name] else { return nil }
        return FieldDescriptor(message: self, index: index)
    }

    /// The field with this number.
    public func field(number: Int32) -> FieldDescriptor? {
        guard let index = info.fieldByNumber[number] else { return nil }
        return FieldDescriptor(message: self, index: index)
    }

    public var description: String { fullName }

    public static func == (lhs: MessageDescriptor, rhs: MessageDescriptor) -> Bool {
        lhs.storage === rhs.storage && lhs.index == rhs.index
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(storage))
        hasher.combine(index)
    }
}
