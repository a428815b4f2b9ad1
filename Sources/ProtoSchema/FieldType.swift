/// The type of a field's values, as `FieldDescriptorProto.Type` numbers it.
///
/// It decides the wire type, the zero value, the Swift case of `ProtoValue` that holds a value
/// and the JSON form, so every codec switches on it.
public enum FieldType: Int32, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case double = 1
    case float = 2
    case int64 = 3
    case uint64 = 4
    case int32 = 5
    case fixed64 = 6
    case fixed32 = 7
    case bool = 8
    case string = 9
    /// proto2's deprecated group encoding; a schema may contain it, the codecs refuse it.
    case group = 10
    case message = 11
    case bytes = 12
    case uint32 = 13
    case `enum` = 14
    case sfixed32 = 15
    case sfixed64 = 16
    case sint32 = 17
    case sint64 = 18

    /// The keyword in a .proto file ("int64", "bytes", …; "message", "enum" and "group" for those).
    public var description: String {
        switch self {
        case .double: "double"
        case .float: "float"
        case .int64: "int64"
        case .uint64: "uint64"
        case .int32: "int32"
        case .fixed64: "fixed64"
        case .fixed32: "fixed32"
        case .bool: "bool"
        case .string: "string"
        case .group: "group"
        case .message: "message"
        case .bytes: "bytes"
        case .uint32: "uint32"
        case .enum: "enum"
        case .sfixed32: "sfixed32"
        case .sfixed64: "sfixed64"
        case .sint32: "sint32"
        case .sint64: "sint64"
        }
    }

    /// The wire type a single value of this type is written with.
    var wireType: WireReader.WireType {
        switch self {
        case .double, .fixed64, .sfixed64: .fixed64
        case .float, .fixed32, .sfixed32: .fixed32
        case .string, .bytes, .message: .lengthDelimited
        case .group: .startGroup
        case .int64, .uint64, .int32, .bool, .uint32, .enum, .sint32, .sint64: .varint
        }
    }

    /// True for the numeric types a repeated field may pack into one length-delimited value.
    var isPackable: Bool {
        switch self {
        case .string, .bytes, .message, .group: false
        default: true
        }
    }

    /// True for the types that may be the key of a map.
    var isValidMapKey: Bool {
        switch self {
        case .double, .float, .bytes, .message, .group, .enum: false
        default: true
        }
    }
}

/// Whether a field holds one value or many, as `FieldDescriptorProto.Label` numbers it.
public enum FieldLabel: Int32, Sendable, Hashable {
    case optional = 1
    case required = 2
    case repeated = 3
}
