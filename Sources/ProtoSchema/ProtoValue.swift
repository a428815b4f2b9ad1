/// The value of one field of a `DynamicMessage`.
///
/// One case per kind of Swift value, shared by the protobuf types with the same range:
/// `int32` holds int32, sint32 and sfixed32; `int64` holds int64, sint64 and sfixed64; `uint32`
/// holds uint32 and fixed32; `uint64` holds uint64 and fixed64. Enums are held by number because
/// proto3 enums are open. A repeated field holds a `list`, a map field a `map`.
///
/// Equality is exact: floating-point values compare by bit pattern (so NaN equals itself and
/// -0.0 differs from 0.0, as their encodings do) and strings by their UTF-8 bytes.
public enum ProtoValue: Sendable, Equatable {
    case bool(Bool)
    case int32(Int32)
    case int64(Int64)
    case uint32(UInt32)
    case uint64(UInt64)
    case float(Float)
    case double(Double)
    case string(String)
    case bytes([UInt8])
    case enumNumber(Int32)
    case message(DynamicMessage)
    case list([ProtoValue])
    case map([MapKey: ProtoValue])

    public static func == (lhs: ProtoValue, rhs: ProtoValue) -> Bool {
        switch (lhs, rhs) {
        case (.bool(let a), .bool(let b)): a == b
        case (.int32(let a), .int32(let b)): a == b
        case (.int64(let a), .int64(let b)): a == b
        case (.uint32(let a), .uint32(let b)): a == b
        case (.uint64(let a), .uint64(let b)): a == b
        case (.float(let a), .float(let b)): a.bitPattern == b.bitPattern
        case (.double(let a), .double(let b)): a.bitPattern == b.bitPattern
        case (.string(let a), .string(let b)): a.utf8.elementsEqual(b.utf8)
        case (.bytes(let a), .bytes(let b)): a == b
        case (.enumNumber(let a), .enumNumber(let b)): a == b
        case (.message(let a), .message(let b)): a == b
        case (.list(let a), .list(let b)): a == b
        case (.map(let a), .map(let b)): a == b
        default: false
        }
    }

    /// True for proto3's zero values, which a field without presence does not store or encode.
    var isZero: Bool {
        switch self {
        case .bool(let v): !v
        case .int32(let v): v == 0
        case .int64(let v): v == 0
        case .uint32(let v): v == 0
        case .uint64(let v): v == 0
        case .float(let v): v.bitPattern == 0
        case .double(let v): v.bitPattern == 0
        case .string(let v): v.isEmpty
        case .bytes(let v): v.isEmpty
        case .enumNumber(let v): v == 0
        case .message: false
        case .list(let v): v.isEmpty
        case .map(let v): v.isEmpty
        }
    }

    /// The name of the case, for error messages ("a string", "a list", …).
    var kindDescription: String {
        switch self {
        case .bool: "a bool"
        case .int32: "an int32"
        case .int64: "an int64"
        case .uint32: "a uint32"
        case .uint64: "a uint64"
        case .float: "a float"
        case .double: "a double"
        case .string: "a string"
        case .bytes: "bytes"
        case .enumNumber: "an enum number"
        case .message(let m): "a \(m.descriptor.fullName) message"
        case .list: "a list"
        case .map: "a map"
        }
    }

    /// The zero value of a single (not repeated) value of `type`; nil for messages.
    static func zero(of type: FieldType) -> ProtoValue? {
        switch type {
        case .bool: .bool(false)
        case .int32, .sint32, .sfixed32: .int32(0)
        case .int64, .sint64, .sfixed64: .int64(0)
        case .uint32, .fixed32: .uint32(0)
        case .uint64, .fixed64: .uint64(0)
        case .float: .float(0)
        case .double: .double(0)
        case .string: .string("")
        case .bytes: .bytes([])
        case .enum: .enumNumber(0)
        case .message, .group: nil
        }
    }

    /// True when the case is the one that holds single values of `type`.
    func fits(_ type: FieldType) -> Bool {
        switch (self, type) {
        case (.bool, .bool): true
        case (.int32, .int32), (.int32, .sint32), (.int32, .sfixed32): true
        case (.int64, .int64), (.int64, .sint64), (.int64, .sfixed64): true
        case (.uint32, .uint32), (.uint32, .fixed32): true
        case (.uint64, .uint64), (.uint64, .fixed64): true
        case (.float, .float), (.double, .double), (.string, .string), (.bytes, .bytes): true
        case (.enumNumber, .enum): true
        case (.message, .message), (.message, .group): true
        default: false
        }
    }
}
