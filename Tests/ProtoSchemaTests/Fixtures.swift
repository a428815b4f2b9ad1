import ModerationMessages
import ProtoBridge
import ProtoSchema
import RPCMessages
import TestSupport
import Testing

/// Every generated message type, from both schemas.
let allMessageTypes: [any ProtoMessage.Type] = RPCSchema.messageTypes + ModerationSchema.messageTypes

/// The schema of both generated modules, parsed once.
let realSchema = Result { () throws(ProtoSchemaError) in
    try Schema(fileDescriptorSets: [RPCSchema.fileDescriptorSet, ModerationSchema.fileDescriptorSet])
}

/// The hand-built `test/v1/scalars.proto` schema (every scalar type, maps with every kind of
/// key, a oneof, proto3 optional, recursion), parsed once.
let scalarsSchema = Result { () throws(ProtoSchemaError) in
    try Schema(fileDescriptorSet: TestDescriptors.scalarsSet)
}

func schema() throws -> Schema { try realSchema.get() }

func messageType(_ name: String) throws -> MessageDescriptor {
    try #require(try schema().message(named: name), "no message \(name)")
}

func scalars() throws -> MessageDescriptor {
    try #require(try scalarsSchema.get().message(named: "test.v1.Scalars"))
}

/// A message type as a test argument (Swift Testing needs a describable, sendable value).
struct MessageTypeCase: Sendable, CustomTestStringConvertible {
    let type: any ProtoMessage.Type
    init(_ type: any ProtoMessage.Type) { self.type = type }
    var testDescription: String { type.protoName }
}

/// A seed derived from a type's name that is the same in every run (`hashValue` is not).
func stableSeed(_ name: String) -> UInt64 {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in name.utf8 {
        hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
    }
    return hash
}

extension TestDescriptors {
    /// `test/v1/scalars.proto`, as protoc would describe it.
    static let scalarsSet: [UInt8] = {
        let color = enumType(
            "Color", [("COLOR_UNSPECIFIED", 0), ("COLOR_RED", 1), ("COLOR_GREEN", 2), ("COLOR_NEGATIVE", -1)])
        let scalars = message(
            "Scalars",
            fields: [
                field("d", 1, .double), field("f", 2, .float), field("i64", 3, .int64), field("u64", 4, .uint64),
                field("i32", 5, .int32), field("f64", 6, .fixed64), field("f32", 7, .fixed32), field("b", 8, .bool),
                field("s", 9, .string), field("by", 12, .bytes), field("u32", 13, .uint32),
                field("color", 14, .enumType, typeName: ".test.v1.Color"), field("sf32", 15, .sfixed32),
                field("sf64", 16, .sfixed64), field("s32", 17, .sint32), field("s64", 18, .sint64),
                field("packed_s32", 20, .sint32, repeated: true), field("doubles", 21, .double, repeated: true),
                field("strings", 22, .string, repeated: true),
                field("unpacked", 23, .int32, repeated: true, packed: false),
                field("colors", 24, .enumType, repeated: true, typeName: "Color"),
                field("by_int", 30, .message, repeated: true, typeName: ".test.v1.Scalars.ByIntEntry"),
                field("by_bool", 31, .message, repeated: true, typeName: ".test.v1.Scalars.ByBoolEntry"),
                field("by_u64", 32, .message, repeated: true, typeName: ".test.v1.Scalars.ByU64Entry"),
                field("by_sint", 33, .message, repeated: true, typeName: ".test.v1.Scalars.BySintEntry"),
                field("maybe", 40, .int32, oneof: 1, proto3Optional: true),
                field("text", 50, .string, oneof: 0),
                field("nested", 51, .message, typeName: "Scalars", oneof: 0),
                field("child", 60, .message, typeName: ".test.v1.Scalars"),
                field("json_named", 61, .string, jsonName: "custom"),
                field("inner", 62, .message, typeName: "Scalars.Inner"),
            ],
            nested: [
                mapEntry("ByIntEntry", key: .int32, value: .string),
                mapEntry("ByBoolEntry", key: .bool, value: .enumType, valueTypeName: ".test.v1.Color"),
                mapEntry("ByU64Entry", key: .uint64, value: .message, valueTypeName: ".test.v1.Scalars"),
                mapEntry("BySintEntry", key: .sint64, value: .bytes),
                message(
                    "Inner", fields: [field("level", 1, .enumType, typeName: "Level")],
                    enums: [enumType("Level", [("LEVEL_LOW", 0), ("LEVEL_HIGH", 1)])]),
            ],
            oneofs: ["choice", "_maybe"])
        let service =
            string(1, "Echo")
            + Wire.field(
                2,
                method(
                    "Both", input: ".test.v1.Scalars", output: ".test.v1.Scalars", clientStreaming: true,
                    serverStreaming: true))
        return set([
            file("test/v1/scalars.proto", package: "test.v1", messages: [scalars], enums: [color], services: [service])
        ])
    }()
}
