import GRPCMessages
import ModerationMessages
import ProtoBridge
import RPCMessages
import TestSupport
import Testing

/// Every generated message type, from all three schemas.
let allMessageTypes: [any ProtoMessage.Type] =
    RPCSchema.messageTypes + ModerationSchema.messageTypes + GRPCSchema.messageTypes

@Suite("Round trips of every message type")
struct RoundTripTests {
    @Test("Swift decode → encode equals protobuf-c's own re-encoding", arguments: allMessageTypes.map(TypeCase.init))
    func matchesProtobufC(_ type: TypeCase) throws {
        try type.check { (messageType: any ProtoMessage.Type) in
            try Self.roundTrip(messageType)
        }
    }

    private static func roundTrip<M: ProtoMessage>(_ type: M.Type) throws {
        var random = RandomMessages(seed: UInt64(truncatingIfNeeded: M.protoName.hashValue & 0xFFFF) + 1)
        for _ in 0..<200 {
            let input = random.encoding(of: type)
            let canonical = try #require(
                ProtoDescriptors.canonical(input, as: type), "protobuf-c refused a valid \(M.protoName)")
            let decoded = try M(serializedBytes: input)
            let encoded = decoded.serializedBytes()
            #expect(encoded == canonical, "\(M.protoName): re-encoding differs from protobuf-c's")
            let again = try M(serializedBytes: encoded)
            #expect(again == decoded, "\(M.protoName): decode(encode(x)) != x")
        }
    }

    @Test func emptyInputDecodesToDefaults() throws {
        #expect(try KickMemberRequest(serializedBytes: [UInt8]()) == KickMemberRequest())
        #expect(try Status(serializedBytes: [UInt8]()) == Status())
        #expect(KickMemberRequest().serializedBytes().isEmpty)
    }

    @Test func stringsAndBytesKeepEveryCharacter() throws {
        let payload: [UInt8] = [0, 1, 0, 255, 0]
        let echo = EchoRequest(payload: payload)
        #expect(try EchoRequest(serializedBytes: echo.serializedBytes()).payload == payload)

        let user = User(uid: "ünïcödé-日本-🙂", name: "", avatar: "a", metadata: ["k": "", "": "v"], createdAt: -1)
        let decoded = try User(serializedBytes: user.serializedBytes())
        #expect(decoded == user)
        #expect(decoded.metadata[""] == "v")
    }

    @Test func unknownEnumValuesSurvive() throws {
        // GroupMember.scope = 42, a value this build does not know.
        var bytes: [UInt8] = []
        Wire.tag(4, wireType: 0, into: &bytes)
        Wire.varint(42, into: &bytes)
        let member = try GroupMember(serializedBytes: bytes)
        #expect(member.scope == .unrecognized(42))
        #expect(member.scope.protoValueName == nil)
        #expect(member.serializedBytes() == bytes)
        #expect(Scope(protoValueName: "SCOPE_ADMIN") == .admin)
    }

    @Test func oneofPresenceIsKeptEvenForZero() throws {
        let live = SubscribeRequest(userUID: "u")
        let fromZero = SubscribeRequest(userUID: "u", start: .afterSeq(0))
        #expect(try SubscribeRequest(serializedBytes: live.serializedBytes()).start == nil)
        #expect(try SubscribeRequest(serializedBytes: fromZero.serializedBytes()).start == .afterSeq(0))
    }

    @Test func mapsRoundTripAndLastDuplicateWins() throws {
        let header = CallHeader(method: "/a.B/C", metadata: ["x": "1", "y": "2"])
        #expect(try CallHeader(serializedBytes: header.serializedBytes()) == header)
        // Two entries with the same key: proto3 says the last one wins.
        let entry1 = Wire.field(1, Array("k".utf8)) + Wire.field(2, Array("first".utf8))
        let entry2 = Wire.field(1, Array("k".utf8)) + Wire.field(2, Array("second".utf8))
        let bytes = Wire.field(6, entry1) + Wire.field(6, entry2)
        #expect(try CallHeader(serializedBytes: bytes).metadata == ["k": "second"])
    }

    @Test func nestedMessagesAndRepeatedFields() throws {
        let response = ListMembersResponse(
            members: (0..<100).map {
                GroupMember(uid: "user-\($0)", name: "User \($0)", scope: .participant, joinedAt: Int64($0))
            },
            nextCursor: "abc")
        #expect(try ListMembersResponse(serializedBytes: response.serializedBytes()) == response)
        let action = Action(
            seq: 9, action: .kicked, actionBy: User(uid: "a"), actionOn: User(uid: "b"),
            actionFor: Group(guid: "g", tags: ["t1", "t2"], membersCount: 3), oldScope: .moderator)
        #expect(try Action(serializedBytes: action.serializedBytes()) == action)
    }
}

/// A message type as a test argument (Swift Testing needs a describable, sendable value).
struct TypeCase: Sendable, CustomTestStringConvertible {
    let type: any ProtoMessage.Type
    init(_ type: any ProtoMessage.Type) { self.type = type }
    var testDescription: String { type.protoName }

    func check(_ body: (any ProtoMessage.Type) throws -> Void) throws { try body(type) }
}
