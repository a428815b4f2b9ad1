/// Builders of serialized descriptor protos (`FileDescriptorProto` and what it holds), for
/// schemas the generated modules do not have: the descriptor-driven code's tests (ProtoSchema,
/// gRPC reflection) describe the files they need by hand.
public enum TestDescriptors {
    public enum Kind: UInt64, Sendable {
        case double = 1
        case float
        case int64
        case uint64
        case int32
        case fixed64
        case fixed32
        case bool
        case string
        case group
        case message
        case bytes
        case uint32
        case enumType
        case sfixed32
        case sfixed64
        case sint32
        case sint64
    }

    public static func string(_ number: UInt32, _ value: String) -> [UInt8] {
        Wire.field(number, Array(value.utf8))
    }

    public static func varint(_ number: UInt32, _ value: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        Wire.tag(number, wireType: 0, into: &out)
        Wire.varint(value, into: &out)
        return out
    }

    public static func field(
        _ name: String, _ number: UInt64, _ type: Kind, repeated: Bool = false, typeName: String? = nil,
        oneof: UInt64? = nil, proto3Optional: Bool = false, jsonName: String? = nil, packed: Bool? = nil
    ) -> [UInt8] {
        var out = string(1, name) + varint(3, number) + varint(4, repeated ? 3 : 1) + varint(5, type.rawValue)
        if let typeName { out += string(6, typeName) }
        if let packed { out += Wire.field(8, varint(2, packed ? 1 : 0)) }
        if let oneof { out += varint(9, oneof) }
        if let jsonName { out += string(10, jsonName) }
        if proto3Optional { out += varint(17, 1) }
        return out
    }

    public static func message(
        _ name: String, fields: [[UInt8]] = [], nested: [[UInt8]] = [], enums: [[UInt8]] = [], oneofs: [String] = [],
        mapEntry: Bool = false, extensions: [[UInt8]] = []
    ) -> [UInt8] {
        var out = string(1, name)
        for field in fields { out += Wire.field(2, field) }
        for extensionField in extensions { out += Wire.field(6, extensionField) }
        for message in nested { out += Wire.field(3, message) }
        for enumType in enums { out += Wire.field(4, enumType) }
        if mapEntry { out += Wire.field(7, varint(7, 1)) }
        for oneof in oneofs { out += Wire.field(8, string(1, oneof)) }
        return out
    }

    public static func mapEntry(_ name: String, key: Kind, value: Kind, valueTypeName: String? = nil) -> [UInt8] {
        message(
            name, fields: [field("key", 1, key), field("value", 2, value, typeName: valueTypeName)], mapEntry: true)
    }

    public static func enumType(_ name: String, _ values: [(String, Int32)]) -> [UInt8] {
        var out = string(1, name)
        for (valueName, number) in values {
            out += Wire.field(2, string(1, valueName) + varint(2, UInt64(bitPattern: Int64(number))))
        }
        return out
    }

    public static func method(
        _ name: String, input: String, output: String, clientStreaming: Bool = false, serverStreaming: Bool = false
    ) -> [UInt8] {
        string(1, name) + string(2, input) + string(3, output)
            + (clientStreaming ? varint(5, 1) : []) + (serverStreaming ? varint(6, 1) : [])
    }

    public static func file(
        _ name: String, package: String, dependencies: [String] = [], messages: [[UInt8]] = [], enums: [[UInt8]] = [],
        services: [[UInt8]] = [], extensions: [[UInt8]] = [], syntax: String = "proto3"
    ) -> [UInt8] {
        var out = string(1, name) + string(2, package)
        for dependency in dependencies { out += string(3, dependency) }
        for message in messages { out += Wire.field(4, message) }
        for enumType in enums { out += Wire.field(5, enumType) }
        for service in services { out += Wire.field(6, service) }
        for extensionField in extensions { out += Wire.field(7, extensionField) }
        return out + string(12, syntax)
    }

    /// A `FieldDescriptorProto` of an optional int32 extension of `extendee`.
    public static func extensionField(_ name: String, _ number: UInt64, _ extendee: String) -> [UInt8] {
        string(1, name) + string(2, extendee) + varint(3, number) + varint(4, 1) + varint(5, Kind.int32.rawValue)
    }

    public static func set(_ files: [[UInt8]]) -> [UInt8] {
        files.flatMap { Wire.field(1, $0) }
    }
}
