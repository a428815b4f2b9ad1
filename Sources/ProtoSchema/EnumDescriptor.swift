/// An enum type of a `Schema`: its values by name and number.
///
/// proto3 enums are open, so a number without a name is a valid value: lookups by number return
/// nil and the JSON printer writes the number instead of a name.
public struct EnumDescriptor: Sendable, Hashable, CustomStringConvertible {
    let storage: SchemaStorage
    let index: Int

    var info: SchemaStorage.EnumInfo { storage.enums[index] }

    /// The fully-qualified name, e.g. "moderation.v1.Scope".
    public var fullName: String { info.fullName }
    /// The name within its scope, e.g. "Scope".
    public var name: String { info.name }
    /// The `.proto` file that declares it.
    public var fileName: String { storage.files[info.fileIndex].name }
    /// The comment written before its declaration, without the `//` markers.
    public var leadingComments: String? { info.comments }

    /// The values, in declaration order.
    public var values: [EnumValueDescriptor] {
        info.values.map { EnumValueDescriptor(name: $0.name, number: $0.number, leadingComments: $0.comments) }
    }

    /// The value with this name, e.g. "SCOPE_ADMIN".
    public func value(named name: String) -> EnumValueDescriptor? {
        guard let index = info.valueByName[name] else { return nil }
        let value = info.values[index]
        return EnumValueDescriptor(name: value.name, number: value.number, leadingComments: value.comments)
    }

    /// The (first declared) value with this number, or nil for a number the enum does not name.
    public func value(number: Int32) -> EnumValueDescriptor? {
        guard let index = info.valueByNumber[number] else { return nil }
        let value = info.values[index]
        return EnumValueDescriptor(name: value.name, number: value.number, leadingComments: value.comments)
    }

    public var description: String { fullName }

    public static func == (lhs: EnumDescriptor, rhs: EnumDescriptor) -> Bool {
        lhs.storage === rhs.storage && lhs.index == rhs.index
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(storage))
        hasher.combine(index)
    }
}
