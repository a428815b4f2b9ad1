import ModerationMessages
import ProtoBridge
import RPCMessages
import SeededRandom
import TestSupport
import Testing

@Suite("Decoding untrusted bytes")
struct MalformedInputTests {
    @Test("Random and mutated bytes never crash any decoder", arguments: allMessageTypes.map(TypeCase.init))
    func garbageIsAnErrorOrAValidMessage(_ type: TypeCase) throws {
        try type.check { (messageType: any ProtoMessage.Type) in
            try Self.survive(messageType)
        }
    }

    private static func survive<M: ProtoMessage>(_ type: M.Type) throws {
        var rng = SplitMix64(seed: 0xBAD)
        var random = RandomMessages(seed: 7)
        for round in 0..<300 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0...64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            } else {
                // A valid encoding, truncated or with a few bytes flipped.
                bytes = random.encoding(of: type)
                if !bytes.isEmpty {
                    if Bool.random(using: &rng) {
                        bytes.removeLast(Int.random(in: 1...bytes.count, using: &rng))
                    } else {
                        for _ in 0..<3 {
                            bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= UInt8.random(
                                in: 1...255, using: &rng)
                        }
                    }
                }
            }
            do {
                let decoded = try M(serializedBytes: bytes)
                #expect(try M(serializedBytes: decoded.serializedBytes()) == decoded)
            } catch {
                #expect(error.messageName == M.protoName)
            }
        }
    }

    @Test func truncatedInputNamesTheMessage() {
        let bytes = Array(KickMemberRequest(guid: "group-1", uid: "user-1").serializedBytes().dropLast())
        #expect(throws: ProtoDecodingError.self) { try KickMemberRequest(serializedBytes: bytes) }
        do {
            _ = try KickMemberRequest(serializedBytes: bytes)
        } catch {
            #expect(error.messageName == "moderation.v1.KickMemberRequest")
            #expect(error.description.contains("moderation.v1.KickMemberRequest"))
        }
    }

    @Test func invalidUTF8InAStringIsRefusedNamingTheField() {
        let bytes = Wire.field(2, [0x61, 0xC3, 0x28]) // KickMemberRequest.uid = "a" + invalid sequence
        #expect(
            throws: ProtoDecodingError(
                messageName: "moderation.v1.KickMemberRequest", reason: "field uid is not valid UTF-8")
        ) {
            try KickMemberRequest(serializedBytes: bytes)
        }
    }

    @Test func embeddedNULInAStringIsRefusedNamingTheField() {
        let bytes = Wire.field(1, Array("bob".utf8) + [0] + Array("evil".utf8))
        #expect(
            throws: ProtoDecodingError(
                messageName: "moderation.v1.KickMemberRequest", reason: "field guid contains a NUL character")
        ) {
            try KickMemberRequest(serializedBytes: bytes)
        }
        let leadingNUL = Wire.field(1, [0])
        #expect(throws: ProtoDecodingError.self) { try KickMemberRequest(serializedBytes: leadingNUL) }
        // In a map value and in a repeated string too.
        let entry = Wire.field(1, Array("k".utf8)) + Wire.field(2, [0x76, 0])
        #expect(throws: ProtoDecodingError.self) { try CallHeader(serializedBytes: Wire.field(6, entry)) }
        #expect(throws: ProtoDecodingError.self) { try CallHeader(serializedBytes: Wire.field(7, [0x61, 0])) }
    }

    @Test func wrongWireTypeIsAnError() {
        var bytes: [UInt8] = []
        Wire.tag(1, wireType: 0, into: &bytes) // guid is a string; send a varint
        Wire.varint(5, into: &bytes)
        #expect(throws: ProtoDecodingError.self) { try KickMemberRequest(serializedBytes: bytes) }
    }

    @Test func lengthBeyondTheInputIsAnError() {
        var bytes: [UInt8] = []
        Wire.tag(1, wireType: 2, into: &bytes)
        Wire.varint(1 << 40, into: &bytes)
        bytes += [1, 2, 3]
        #expect(throws: ProtoDecodingError.self) { try KickMemberRequest(serializedBytes: bytes) }
    }

    @Test func memoryBlowUpIsRefusedNotAllocated() throws {
        // 4 MiB of empty GroupMember entries: 2 bytes each on the wire, ~60 in protobuf-c's structs.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4 << 20)
        for _ in 0..<(2 << 20) { bytes += [0x0A, 0x00] }
        do {
            _ = try ListMembersResponse(serializedBytes: bytes)
            Issue.record("a 4 MiB blow-up decoded")
        } catch {
            #expect(error.reason.contains("bytes of memory"))
        }
        // The arena is usable afterwards.
        #expect(try KickMemberRequest(serializedBytes: KickMemberRequest(guid: "g").serializedBytes()).guid == "g")
    }
}
