import ModerationMessages
import ProtoBridge
import ProtoSchema
import RPCMessages
import TestSupport
import Testing

@Suite("Wire round trips of every message type")
struct WireRoundTripTests {
    @Test(
        "Dynamic decode → encode equals the generated type's re-encoding, byte for byte",
        arguments: allMessageTypes.map(MessageTypeCase.init))
    func matchesTheGeneratedType(_ type: MessageTypeCase) throws {
        try Self.roundTrip(type.type)
    }

    private static func roundTrip<M: ProtoMessage>(_ type: M.Type) throws {
        let descriptor = try messageType(M.protoName)
        var random = RandomMessages(seed: stableSeed(M.protoName))
        for _ in 0..<200 {
            let input = random.encoding(of: type)
            let expected = try M(serializedBytes: input).serializedBytes()
            let dynamic = try DynamicMessage(serializedBytes: input, as: descriptor)
            let encoded = dynamic.serializedBytes()
            #expect(encoded == expected, "\(M.protoName): dynamic re-encoding differs from the generated type's")
            // And the generated type reads the dynamic encoding back as the same value.
            #expect(try M(serializedBytes: encoded) == M(serializedBytes: input))
            #expect(try DynamicMessage(serializedBytes: encoded, as: descriptor) == dynamic)
        }
    }

    @Test func aMessageBuiltInSwiftEncodesLikeTheGeneratedType() throws {
        let descriptor = try messageType("moderation.v1.Action")
        let user = try messageType("moderation.v1.User")
        var actionBy = DynamicMessage(user)
        try actionBy.set("uid", to: .string("a"))
        try actionBy.set(
            "metadata", to: .map([.string("z"): .string("1"), .string("b"): .string(""), .string(""): .string("v")]))
        var action = DynamicMessage(descriptor)
        try action.set("seq", to: .uint64(9))
        try action.set("action", to: .enumNumber(7))
        try action.set("actionBy", to: .message(actionBy))
        try action.set("expires_at", to: .int64(-1))
        try action.set("reason", to: .string("")) // zero: not set, not encoded
        let generated = Action(
            seq: 9, action: .kicked, actionBy: User(uid: "a", metadata: ["z": "1", "b": "", "": "v"]), expiresAt: -1)
        #expect(action.serializedBytes() == generated.serializedBytes())
        #expect(!action.has(descriptor.field(named: "reason")!))
        #expect(action.value(of: descriptor.field(named: "reason")!) == .string(""))
    }

    @Test func unknownFieldsAreSkipped() throws {
        let descriptor = try messageType("moderation.v1.KickMemberRequest")
        var bytes = Wire.field(1, Array("g".utf8))
        Wire.tag(99, wireType: 0, into: &bytes)
        Wire.varint(12345, into: &bytes)
        bytes += Wire.field(100, [1, 2, 3])
        Wire.tag(101, wireType: 5, into: &bytes)
        Wire.fixed(7, bytes: 4, into: &bytes)
        Wire.tag(102, wireType: 1, into: &bytes)
        Wire.fixed(7, bytes: 8, into: &bytes)
        Wire.tag(103, wireType: 3, into: &bytes) // a group, with a field inside
        Wire.tag(1, wireType: 0, into: &bytes)
        Wire.varint(1, into: &bytes)
        Wire.tag(103, wireType: 4, into: &bytes)
        bytes += Wire.field(2, Array("u".utf8))
        let decoded = try DynamicMessage(serializedBytes: bytes, as: descriptor)
        #expect(decoded.serializedBytes() == KickMemberRequest(guid: "g", uid: "u").serializedBytes())
        #expect(decoded.jsonString() == #"{"guid":"g","uid":"u"}"#)
    }

    @Test func packedAndUnpackedRepeatedFieldsAreBothAccepted() throws {
        let descriptor = try messageType("moderation.v1.ListGroupsRequest")
        var unpacked: [UInt8] = []
        for value in [1, 3, 77] as [UInt64] {
            Wire.tag(5, wireType: 0, into: &unpacked)
            Wire.varint(value, into: &unpacked)
        }
        var payload: [UInt8] = []
        for value in [1, 3, 77] as [UInt64] { Wire.varint(value, into: &payload) }
        let packed = Wire.field(5, payload)
        let a = try DynamicMessage(serializedBytes: unpacked, as: descriptor)
        let b = try DynamicMessage(serializedBytes: packed, as: descriptor)
        #expect(a == b)
        #expect(a.serializedBytes() == packed)
        #expect(a.jsonString() == #"{"types":["GROUP_TYPE_PUBLIC","GROUP_TYPE_PRIVATE",77]}"#)
        // Both forms of one field in one message add up.
        let both = try DynamicMessage(serializedBytes: packed + unpacked, as: descriptor)
        #expect(both["types"] == .list([1, 3, 77, 1, 3, 77].map { .enumNumber($0) }))
    }

    @Test func aSingularSubMessageSeenTwiceIsMerged() throws {
        let descriptor = try messageType("moderation.v1.GetUserResponse")
        let first = Wire.field(1, Wire.field(1, Array("uid".utf8)))
        let second = Wire.field(1, Wire.field(2, Array("name".utf8)))
        let decoded = try DynamicMessage(serializedBytes: first + second, as: descriptor)
        #expect(decoded.jsonString() == #"{"user":{"uid":"uid","name":"name"}}"#)
        #expect(
            try GetUserResponse(serializedBytes: first + second)
                == GetUserResponse(user: User(uid: "uid", name: "name")))
    }

    @Test func everyScalarTypeHasItsWireForm() throws {
        let scalars = try scalars()
        var message = DynamicMessage(scalars)
        try message.set("i32", to: .int32(-1))
        try message.set("s32", to: .int32(-1))
        try message.set("s64", to: .int64(-2))
        try message.set("f32", to: .uint32(0x0102_0304))
        try message.set("sf64", to: .int64(-1))
        try message.set("f", to: .float(1.5))
        try message.set("d", to: .double(-0.0))
        try message.set("b", to: .bool(true))
        try message.set("unpacked", to: .list([.int32(1), .int32(2)]))
        try message.set("packed_s32", to: .list([.int32(-1), .int32(1)]))
        var expected: [UInt8] = []
        expected += [0x09] + [0, 0, 0, 0, 0, 0, 0, 0x80] // d = -0.0 (not zero: its bits are not)
        expected += [0x15] + [0, 0, 0xC0, 0x3F] // f = 1.5
        expected += [0x28] + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01] // i32 = -1, sign-extended
        expected += [0x3D] + [4, 3, 2, 1] // f32
        expected += [0x40, 0x01] // b
        expected += [0x81, 0x01] + [UInt8](repeating: 0xFF, count: 8) // sf64 = -1
        expected += [0x88, 0x01, 0x01] // s32 = -1 → zigzag 1
        expected += [0x90, 0x01, 0x03] // s64 = -2 → zigzag 3
        expected += [0xA2, 0x01, 0x02, 0x01, 0x02] // packed_s32 = [-1, 1] → zigzag [1, 2]
        expected += [0xB8, 0x01, 0x01, 0xB8, 0x01, 0x02] // unpacked = [1, 2] with [packed = false]
        #expect(message.serializedBytes() == expected)
        #expect(try DynamicMessage(serializedBytes: expected, as: scalars) == message)
    }

    @Test func presenceOfOneofAndOptionalMembersIsKeptForZero() throws {
        let scalars = try scalars()
        var message = DynamicMessage(scalars)
        try message.set("maybe", to: .int32(0))
        try message.set("text", to: .string(""))
        #expect(message.serializedBytes() == [0xC0, 0x02, 0x00, 0x92, 0x03, 0x00])
        let decoded = try DynamicMessage(serializedBytes: message.serializedBytes(), as: scalars)
        #expect(decoded.has(scalars.field(named: "maybe")!))
        #expect(decoded.setField(of: scalars.oneofs[0])?.name == "text")
        // Setting another member of the oneof clears the first.
        var other = decoded
        try other.set("nested", to: .message(DynamicMessage(scalars)))
        #expect(other.setField(of: scalars.oneofs[0])?.name == "nested")
        #expect(!other.has(scalars.field(named: "text")!))
    }

    @Test func settingAValueOfTheWrongKindIsAnError() throws {
        var message = DynamicMessage(try scalars())
        #expect(
            throws: ProtoSchemaError(
                code: .invalidValue,
                message: "field \"i64\" of test.v1.Scalars: expected a value of type int64, got a string")
        ) {
            try message.set("i64", to: .string("1"))
        }
        #expect(throws: ProtoSchemaError.self) { try message.set("strings", to: .string("x")) }
        #expect(throws: ProtoSchemaError.self) { try message.set("strings", to: .list([.int32(1)])) }
        #expect(throws: ProtoSchemaError.self) { try message.set("by_int", to: .map([.string("k"): .string("v")])) }
        #expect(throws: ProtoSchemaError.self) {
            try message.set("child", to: .message(DynamicMessage(try messageType("moderation.v1.User"))))
        }
        #expect(throws: ProtoSchemaError.self) { try message.set("nope", to: .bool(true)) }
        #expect(throws: ProtoSchemaError.self) {
            try message.set(try messageType("moderation.v1.User").fields[0], to: .string("x"))
        }
    }
}
