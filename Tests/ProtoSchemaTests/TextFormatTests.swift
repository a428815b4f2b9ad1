import ModerationMessages
import ProtoBridge
import ProtoSchema
import RPCMessages
import TestSupport
import Testing

/// Protobuf's text format (rpc-probe's `--format text`, grpcurl's `-format text`): printed as
/// `protoc --decode` prints it and read back exactly; what protoc writes is read and what is
/// printed protoc reads; the forms of the grammar; errors with the line and column.
@Suite("text format")
struct TextFormatTests {
    @Test(
        "message → text → message is exact for every type, multi-line and on one line",
        arguments: allMessageTypes.map(MessageTypeCase.init))
    func roundTrip(_ type: MessageTypeCase) throws {
        try Self.roundTrip(type.type)
    }

    private static func roundTrip<M: ProtoMessage>(_ type: M.Type) throws {
        let descriptor = try messageType(M.protoName)
        var random = RandomMessages(seed: stableSeed(M.protoName) ^ 0x7E)
        for _ in 0..<40 {
            let message = try DynamicMessage(serializedBytes: random.encoding(of: type), as: descriptor)
            for singleLine in [false, true] {
                let text = message.textFormatString(singleLine: singleLine)
                if singleLine { #expect(!text.contains("\n"), "\(text)") }
                let parsed = try DynamicMessage(textFormat: text, as: descriptor)
                #expect(parsed == message, "\(M.protoName): text changed the message: \(text)")
            }
        }
    }

    @Test func everyScalarTypeSurvivesTextFormat() throws {
        let scalars = try scalars()
        var random = RandomDynamicMessages(seed: 7)
        var sawNaN = false
        for _ in 0..<150 {
            let message = random.message(scalars, depth: 2)
            for singleLine in [false, true] {
                let text = message.textFormatString(singleLine: singleLine)
                sawNaN = sawNaN || text.contains(": nan")
                #expect(try DynamicMessage(textFormat: text, as: scalars) == message, "\(text)")
            }
        }
        #expect(sawNaN)
    }

    @Test("the printed form: proto names, nested messages, maps as entries, enums by name, escapes")
    func golden() throws {
        let group = try DynamicMessage(
            jsonString: #"""
                {"group": {"guid": "g1", "name": "Tab\there \"quoted\" é", "type": "GROUP_TYPE_PUBLIC",
                "tags": ["a", "b"], "metadata": {"z": "1", "a": "2"}, "membersCount": 3, "version": "9"}}
                """#,
            as: try messageType("moderation.v1.GetGroupResponse"))
        #expect(
            group.textFormatString() == #"""
                group {
                  guid: "g1"
                  name: "Tab\there \"quoted\" é"
                  type: GROUP_TYPE_PUBLIC
                  metadata {
                    key: "a"
                    value: "2"
                  }
                  metadata {
                    key: "z"
                    value: "1"
                  }
                  tags: "a"
                  tags: "b"
                  members_count: 3
                  version: 9
                }
                """#)
        #expect(
            group.textFormatString(singleLine: true)
                == #"group { guid: "g1" name: "Tab\there \"quoted\" é" type: GROUP_TYPE_PUBLIC metadata { key: "a" "#
                + #"value: "2" } metadata { key: "z" value: "1" } tags: "a" tags: "b" members_count: 3 version: 9 }"#)
        let echo = try DynamicMessage(
            jsonString: #"{"payload": "AAH/QQ=="}"#, as: try messageType("mrpc.diagnostics.v1.EchoRequest"))
        #expect(echo.textFormatString() == #"payload: "\000\001\377A""#, "bytes in octal past printable ASCII")
        let user = try DynamicMessage(jsonString: #"{"uid": "u"}"#, as: try messageType("moderation.v1.User"))
        #expect(
            user.textFormatString(emitDefaults: true) == "uid: \"u\"\nname: \"\"\navatar: \"\"\ncreated_at: 0",
            "scalars at their defaults; no empty map")
    }

    @Test(
        "the grammar's forms read as protobuf's parsers read them",
        arguments: [
            (#"uid: "a" name: "b""#, #"{"uid":"a","name":"b"}"#),
            ("uid: 'a', name: \"b\";", #"{"uid":"a","name":"b"}"#),
            ("# a comment\nuid: \"a\" # another\n", #"{"uid":"a"}"#),
            (#"uid: "ab" "cd""#, #"{"uid":"abcd"}"#),
            (#"uid: "\x41\u00e9\101\n""#, #"{"uid":"Aé\u0041\n"}"#),
            (
                #"metadata { key: "k" value: "v" } metadata: < key: "l" value: "w" >"#,
                #"{"metadata":{"k":"v","l":"w"}}"#
            ),
            (#"metadata { key: "k" }"#, #"{"metadata":{"k":""}}"#),
        ])
    func forms(_ text: String, _ json: String) throws {
        let type = try messageType("moderation.v1.CreateUserRequest")
        #expect(try DynamicMessage(textFormat: text, as: type) == DynamicMessage(jsonString: json, as: type))
    }

    @Test(
        "numbers, bools, enums, lists and floats in every spelling",
        arguments: [
            ("i32: 0x1F i64: -010 u32: 7", #"{"i32": 31, "i64": "-8", "u32": 7}"#),
            ("b: true", #"{"b": true}"#),
            ("b: t", #"{"b": true}"#),
            ("b: 1", #"{"b": true}"#),
            ("d: 1.5 f: 2.5f", #"{"d": 1.5, "f": 2.5}"#),
            ("d: .5 f: 1e3", #"{"d": 0.5, "f": 1000}"#),
            ("d: -inf f: nan", #"{"d": "-Infinity", "f": "NaN"}"#),
            ("d: inf", #"{"d": "Infinity"}"#),
            ("unpacked: [1, 2] unpacked: 3", #"{"unpacked": [1, 2, 3]}"#),
            ("unpacked: []", #"{}"#),
            ("by: \"\\377\\000\"", #"{"by": "/wA="}"#),
        ])
    func scalarForms(_ text: String, _ json: String) throws {
        let scalars = try scalars()
        #expect(try DynamicMessage(textFormat: text, as: scalars) == DynamicMessage(jsonString: json, as: scalars))
    }

    @Test(
        "what cannot be read names the place: the line and column, or the field",
        arguments: [
            (#"uid: "a"#, "invalid text format at line 1 column 6: the string is not closed on its line"),
            (
                "uid: \"a\"\nname \"b\"",
                "invalid text format at line 2 column 6: expected ':' or '{' after field name name, got '\"'"
            ),
            (#"uid: 5"#, "invalid text format at line 1 column 1: expected a string for uid, got a number 5"),
            (#"uidd: "a""#, #"unknown field "uidd" in moderation.v1.CreateUserRequest (did you mean "uid"?)"#),
            (#"uid: "a" uid: "b""#, #"field "uid" of moderation.v1.CreateUserRequest is given twice"#),
            (
                #"metadata { key: "k" colour: "v" }"#,
                "invalid text format at line 1 column 21: an entry of map metadata has only key and value"
            ),
            (#"uid: ["a"]"#, "invalid text format at line 1 column 1: a list [ … ] for uid, which is not repeated"),
            (
                #"[type.googleapis.com/x] {}"#,
                "invalid text format at line 1 column 1: extensions and Any expansion ([…]) are not supported"
            ),
            (#"uid: "\q""#, #"invalid text format at line 1 column 7: unknown escape \q"#),
            (
                "metadata { key: \"k\"",
                "invalid text format at line 1 column 20: expected '}' to close the message, got the end"
            ),
        ])
    func errors(_ text: String, _ message: String) throws {
        let type = try messageType("moderation.v1.CreateUserRequest")
        #expect {
            try DynamicMessage(textFormat: text, as: type)
        } throws: { error in
            let error = error as? ProtoSchemaError
            return error?.code == .invalidTextFormat && error?.message.hasPrefix(message) == true
        }
    }

    private static func encoding(of type: any ProtoMessage.Type, random: inout RandomMessages) -> [UInt8] {
        func open<M: ProtoMessage>(_ type: M.Type) -> [UInt8] { random.encoding(of: type) }
        return open(type)
    }

    @Test("protoc reads what is printed, and what protoc prints is read: the same bytes both ways")
    func protocAgrees() throws {
        let root = ServerProcess.packageRoot + "/proto"
        let types = [
            "moderation.v1.GetGroupResponse", "moderation.v1.SubscribeResponse", "moderation.v1.AddMembersRequest",
        ]
        var random = RandomMessages(seed: 18)
        for name in types {
            let descriptor = try messageType(name)
            let type = try #require(allMessageTypes.first { $0.protoName == name })
            for _ in 0..<5 {
                let wire = Self.encoding(of: type, random: &random)
                let message = try DynamicMessage(serializedBytes: wire, as: descriptor)
                let encoded = try ChildProcess.run(
                    executable: "/bin/sh",
                    arguments: [
                        "-c", #"cd "$0" && exec protoc --encode="$1" moderation/v1/moderation.proto"#, root, name,
                    ],
                    standardInput: Array(message.textFormatString().utf8))
                #expect(encoded.exitCode == 0, "\(encoded)")
                #expect(
                    try DynamicMessage(serializedBytes: encoded.standardOutputBytes, as: descriptor) == message,
                    "protoc read our text as another message")
                let decoded = try ChildProcess.run(
                    executable: "/bin/sh",
                    arguments: [
                        "-c", #"cd "$0" && exec protoc --decode="$1" moderation/v1/moderation.proto"#, root, name,
                    ],
                    standardInput: message.serializedBytes())
                #expect(decoded.exitCode == 0, "\(decoded)")
                #expect(try DynamicMessage(textFormat: decoded.standardOutput, as: descriptor) == message, "\(decoded)")
            }
        }
    }
}
