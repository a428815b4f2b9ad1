import ModerationMessages
import ProtoBridge
import ProtoSchema
import RPCMessages
import SeededRandom
import TestSupport
import Testing

@Suite("Decoding hostile wire bytes")
struct WireErrorTests {
    @Test(
        "Random, truncated and mutated bytes are an error or agree with the generated type",
        arguments: allMessageTypes.map(MessageTypeCase.init))
    func neverCrash(_ type: MessageTypeCase) throws {
        try Self.survive(type.type)
    }

    private static func survive<M: ProtoMessage>(_ type: M.Type) throws {
        let descriptor = try messageType(M.protoName)
        var rng = SplitMix64(seed: stableSeed(M.protoName) ^ 0xBAD)
        var random = RandomMessages(seed: stableSeed(M.protoName) ^ 7)
        for round in 0..<300 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0...64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            } else {
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
            let generated = try? M(serializedBytes: bytes)
            do {
                let dynamic = try DynamicMessage(serializedBytes: bytes, as: descriptor)
                if let generated, !Self.repeatsASingularMessage(bytes, descriptor) {
                    // Both accept: they read the same message.
                    #expect(dynamic.serializedBytes() == generated.serializedBytes(), "\(M.protoName): \(bytes)")
                }
            } catch {
                #expect(error.code == .invalidWireFormat)
                #expect(error.message.hasPrefix("invalid \(M.protoName): "))
                // What protobuf-c accepts, the dynamic decoder accepts too, except where protobuf-c 1.4.1
                // is laxer than the protobuf spec (and Go's decoder): it truncates keys longer than 32
                // bits and varints longer than 64 bits, reads any wire type for a bool, and (through the
                // bridge) only checks the UTF-8 of the last occurrence of a string field.
                if generated != nil {
                    let stricter = [
                        "invalid field number", "varint longer than 64 bits", "for a bool field",
                        "string is not valid UTF-8",
                    ]
                    #expect(
                        stricter.contains { error.message.contains($0) },
                        "\(M.protoName): refused bytes the generated type accepts: \(error) \(bytes)")
                }
            }
        }
    }

    /// True when `bytes` hold a singular sub-message field more than once at the top level. The
    /// protobuf spec merges the occurrences; protobuf-c 1.4.1 merges only the later one's
    /// strings, bytes and sub-messages and keeps its proto3 scalars even when they are zero (a
    /// later `{request_id}` erases an earlier `{seq, action, …}`), so the generated type reads
    /// such bytes differently from the dynamic decoder. Senders never repeat a singular field.
    static func repeatsASingularMessage(_ bytes: [UInt8], _ descriptor: MessageDescriptor) -> Bool {
        var seen: Set<Int32> = []
        var offset = 0
        func varint() -> UInt64? {
            var value: UInt64 = 0
            for shift in stride(from: UInt64(0), to: 64, by: 7) {
                guard offset < bytes.count else { return nil }
                let byte = bytes[offset]
                offset += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
            }
            return nil
        }
        while offset < bytes.count {
            guard let key = varint() else { return false }
            let number = Int32(truncatingIfNeeded: key >> 3)
            switch key & 7 {
            case 0:
                guard varint() != nil else { return false }
            case 1: offset += 8
            case 5: offset += 4
            case 2:
                guard let length = varint(), length <= UInt64(bytes.count - offset)
                else { return false }
                offset += Int(length)
                if let field = descriptor.fields.first(where: { $0.number == number }), field.type == .message,
                    !field.isRepeated, !seen.insert(number).inserted
                {
                    return true
                }
            default: return false
            }
        }
        return false
    }

    @Test(
        "Malformed bytes name the message type and the field",
        arguments: [
            (
                "moderation.v1.KickMemberRequest",
                Array(Wire.field(1, Array("g".utf8)) + Wire.field(2, Array("user-1".utf8)).dropLast()),
                #"invalid moderation.v1.KickMemberRequest: field "uid" (number 2): length 6 runs past the end of the input (5 bytes left)"#
            ),
            (
                "moderation.v1.KickMemberRequest", Wire.field(2, [0x61, 0xC3, 0x28]),
                #"invalid moderation.v1.KickMemberRequest: field "uid" (number 2): string is not valid UTF-8"#
            ),
            (
                "moderation.v1.KickMemberRequest", [0x08, 0x05],
                #"invalid moderation.v1.KickMemberRequest: field "guid" (number 1): wire type varint, expected length-delimited for a string field"#
            ),
            (
                "moderation.v1.ListMembersRequest", [0x10, 0x80],
                #"invalid moderation.v1.ListMembersRequest: field "limit" (number 2): truncated varint"#
            ),
            (
                "moderation.v1.ListMembersRequest", [0x10] + [UInt8](repeating: 0xFF, count: 10) + [0x01],
                #"invalid moderation.v1.ListMembersRequest: field "limit" (number 2): varint longer than 64 bits"#
            ),
            (
                "moderation.v1.CreateUserResponse", Wire.field(1, Wire.field(1, [0xFF])),
                #"invalid moderation.v1.CreateUserResponse: field "user.uid" (number 1 of moderation.v1.User): string is not valid UTF-8"#
            ),
            (
                "moderation.v1.CreateUserResponse", Wire.field(1, [0x08]),
                #"invalid moderation.v1.CreateUserResponse: field "user.uid" (number 1 of moderation.v1.User): wire type varint, expected length-delimited for a string field"#
            ),
            (
                "moderation.v1.CreateUserResponse", Wire.field(1, [0x82]),
                #"invalid moderation.v1.CreateUserResponse: in field "user" (moderation.v1.User): truncated varint"#
            ),
            (
                "mrpc.v1.CallHeader", Wire.field(6, Wire.field(1, Array("k".utf8)) + [0x10, 0x01]),
                #"invalid mrpc.v1.CallHeader: field "metadata.value" (number 2 of mrpc.v1.CallHeader.MetadataEntry): wire type varint, expected length-delimited for a string field"#
            ),
            (
                "moderation.v1.KickMemberRequest", [0x00, 0x01],
                "invalid moderation.v1.KickMemberRequest: invalid field number 0"
            ),
            (
                "moderation.v1.KickMemberRequest", [0x0E],
                "invalid moderation.v1.KickMemberRequest: invalid wire type 6 for field number 1"
            ),
            (
                "moderation.v1.KickMemberRequest", [0xFB, 0x01, 0x08, 0x01],
                "invalid moderation.v1.KickMemberRequest: unknown field 31: group of field number 31 is not closed"
            ),
            (
                "moderation.v1.KickMemberRequest", [0xFC, 0x01],
                "invalid moderation.v1.KickMemberRequest: unknown field 31: end-group key for field number 31 without a start-group"
            ),
            (
                "moderation.v1.KickMemberRequest", [0xFD, 0x01, 0x00],
                "invalid moderation.v1.KickMemberRequest: unknown field 31: truncated 32-bit value"
            ),
        ] as [(String, [UInt8], String)])
    func namedErrors(_ type: String, _ bytes: [UInt8], _ message: String) throws {
        #expect(throws: ProtoSchemaError(code: .invalidWireFormat, message: message)) {
            try DynamicMessage(serializedBytes: bytes, as: messageType(type))
        }
    }

    @Test func nestingDeeperThanTheLimitIsRefused() throws {
        let scalars = try scalars()
        var bytes: [UInt8] = []
        for _ in 0..<150 { bytes = Wire.field(60, bytes) } // child { child { … } }
        #expect {
            try DynamicMessage(serializedBytes: bytes, as: scalars)
        } throws: { error in
            guard let error = error as? ProtoSchemaError else { return false }
            return error.message.hasPrefix(#"invalid test.v1.Scalars: in field "child.child.child"#)
                && error.message.hasSuffix("(test.v1.Scalars): messages nested more than 100 deep")
        }
        var shallow: [UInt8] = []
        for _ in 0..<100 { shallow = Wire.field(60, shallow) }
        #expect(try DynamicMessage(serializedBytes: shallow, as: scalars).serializedBytes() == shallow)
        #expect(throws: ProtoSchemaError.self) {
            try DynamicMessage(serializedBytes: shallow, as: scalars, maximumDepth: 10)
        }
    }

    @Test func deeplyNestedUnknownGroupsAreRefused() throws {
        var bytes: [UInt8] = []
        for _ in 0..<200 { Wire.tag(31, wireType: 3, into: &bytes) }
        for _ in 0..<200 { Wire.tag(31, wireType: 4, into: &bytes) }
        #expect(
            throws: ProtoSchemaError(
                code: .invalidWireFormat,
                message: "invalid moderation.v1.KickMemberRequest: unknown field 31: groups nested too deeply")
        ) {
            try DynamicMessage(serializedBytes: bytes, as: messageType("moderation.v1.KickMemberRequest"))
        }
    }

    @Test func groupFieldsOfASchemaAreRefusedClearly() throws {
        let bytes = TestDescriptors.set([
            TestDescriptors.file(
                "g.proto", package: "g",
                messages: [
                    TestDescriptors.message("M", fields: [TestDescriptors.field("old", 1, .group, typeName: ".g.M")])
                ], syntax: "proto2")
        ])
        let m = try #require(try Schema(fileDescriptorSet: bytes).message(named: "g.M"))
        #expect(
            throws: ProtoSchemaError(
                code: .invalidWireFormat,
                message: #"invalid g.M: field "old" (number 1): proto2 groups are not supported"#)
        ) {
            try DynamicMessage(serializedBytes: [0x0B, 0x0C], as: m)
        }
        #expect(
            throws: ProtoSchemaError(
                code: .invalidJSONValue, message: #"field "old" of g.M: proto2 groups are not supported"#)
        ) {
            try DynamicMessage(jsonString: #"{"old": {}}"#, as: m)
        }
    }
}
