import GRPCMessages
import ModerationMessages
import ProtoBridge
import ProtoSchema
import RPCMessages
import TestSupport
import Testing

/// The generated JSON encoders (`writeJSON(into:)`) against the descriptor-driven one: a message's
/// generated JSON must be, byte for byte, what `DynamicMessage.jsonUTF8()` prints for the
/// message's own encoding (the path webhook bodies took before the generated encoder).
@Suite("Generated proto3 JSON matches the descriptor-driven encoder")
struct GeneratedJSONTests {
    /// The standard gRPC protos' schema (Any, Duration, Status, health, reflection), parsed once.
    static let grpcSchema = Result { () throws(ProtoSchemaError) in
        try Schema(fileDescriptorSet: GRPCSchema.fileDescriptorSet)
    }

    static func descriptor(_ name: String) throws -> MessageDescriptor {
        if let found = try schema().message(named: name) { return found }
        return try #require(try grpcSchema.get().message(named: name), "no message \(name)")
    }

    /// What the descriptor-driven encoder prints for `value`'s encoding.
    static func expectedJSON<M: ProtoMessage>(_ value: M) throws -> [UInt8] {
        try DynamicMessage(serializedBytes: value.serializedBytes(), as: descriptor(M.protoName)).jsonUTF8()
    }

    /// Checks `value`'s generated JSON against the descriptor-driven encoder's; returns it.
    @discardableResult
    static func expectSameJSON<M: ProtoMessage>(
        _ value: M, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> String {
        let generated = value.jsonUTF8()
        let expected = try expectedJSON(value)
        #expect(
            String(decoding: generated, as: UTF8.self) == String(decoding: expected, as: UTF8.self),
            "\(M.protoName)", sourceLocation: sourceLocation)
        // Byte for byte, not only as Swift strings (which compare by canonical equivalence).
        #expect(generated == expected, "\(M.protoName): the bytes differ", sourceLocation: sourceLocation)
        return String(decoding: generated, as: UTF8.self)
    }

    @Test(
        "Random messages of every type print alike",
        arguments: (RPCSchema.messageTypes + ModerationSchema.messageTypes + GRPCSchema.messageTypes).map(
            MessageTypeCase.init))
    func randomMessages(_ type: MessageTypeCase) throws {
        try Self.randomMessages(type.type)
    }

    private static func randomMessages<M: ProtoMessage>(_ type: M.Type) throws {
        let descriptor = try descriptor(M.protoName)
        // The bridge's own random encodings (valid for protobuf-c by construction)…
        var random = RandomMessages(seed: stableSeed(M.protoName))
        var printedSomething = M().jsonString() != "{}"
        for _ in 0..<100 {
            let value = try M(serializedBytes: random.encoding(of: type))
            printedSomething = try expectSameJSON(value) != "{}" || printedSomething
        }
        // …and descriptor-driven ones, with the awkward values of every scalar type.
        var dynamic = RandomDynamicMessages(seed: stableSeed(M.protoName) &+ 1, allowsNUL: false)
        for _ in 0..<100 {
            let value = try M(serializedBytes: dynamic.message(descriptor).serializedBytes())
            printedSomething = try expectSameJSON(value) != "{}" || printedSomething
        }
        #expect(printedSomething || descriptor.fields.isEmpty, "\(M.protoName): only empty messages were compared")
    }

    /// A generated value with a name, as a test argument.
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let check: @Sendable () throws -> String
        /// The JSON the case must print, when the case pins it down.
        let golden: String?
        var testDescription: String { name }

        init<M: ProtoMessage>(_ name: String, _ value: M, golden: String? = nil) {
            self.name = name
            self.check = { try GeneratedJSONTests.expectSameJSON(value) }
            self.golden = golden
        }
    }

    static let awkward = "quote \" backslash \\ slash / \u{1}\u{1F}\u{7F} \n\r\t\u{8}\u{C} \u{2028} é 日本 🙂 𝄞"

    static let cases: [Case] = [
        Case("empty message", Action(), golden: "{}"),
        Case("an enum at zero left out", HealthCheckResponse(), golden: "{}"),
        Case(
            "strings needing escapes", Action(reason: awkward, idempotencyKey: "\""),
            golden: #"{"reason":"quote \" backslash \\ slash / \u0001\u001F"# + "\u{7F}"
                + #" \n\r\t\b\f "# + "\u{2028} é 日本 🙂 𝄞\",\"idempotencyKey\":\"\\\"\"}"),
        Case(
            "64-bit extremes", Action(seq: .max, expiresAt: .min, timestamp: -1, reportID: 1),
            golden:
                #"{"seq":"18446744073709551615","expiresAt":"-9223372036854775808","timestamp":"-1","reportId":"1"}"#
        ),
        Case(
            "32-bit values", Action(rulesAdded: .max, rulesRemoved: 1),
            golden: #"{"rulesAdded":4294967295,"rulesRemoved":1}"#),
        Case("negative int32", Google_Rpc_Status(code: -3, message: "m"), golden: #"{"code":-3,"message":"m"}"#),
        Case("int32 minimum", Google_Rpc_Status(code: .min), golden: #"{"code":-2147483648}"#),
        Case(
            "Duration as a plain message", Google_Protobuf_Duration(seconds: -1, nanos: -500),
            golden: #"{"seconds":"-1","nanos":-500}"#),
        Case("enums by name", Action(action: .kicked, newScope: .admin)),
        Case("an enum number no value names", Action(action: .init(rawValue: 99), oldScope: .init(rawValue: -5))),
        Case("bool true, false left out", Action(shadow: true), golden: #"{"shadow":true}"#),
        Case("an empty nested message", Action(actionBy: User()), golden: #"{"actionBy":{}}"#),
        Case(
            "nested messages in declaration order",
            Action(
                seq: 3, actionBy: User(uid: "a", createdAt: -5),
                actionFor: Group(guid: "g", type: .password, tags: ["x", "", "y"], membersCount: 4_000_000_000))),
        Case(
            "a map, by its keys' UTF-8 bytes",
            User(
                uid: "u", metadata: ["b": "2", "a": "1", "": "empty", "\u{212B}": "angstrom", "\u{C7}": "c", "🙂": "\""]),
            // U+00C7 (C3 87) before U+212B (E2 84 AB), which Swift's `<` puts after it (as U+00C5).
            golden:
                #"{"uid":"u","metadata":{"":"empty","a":"1","b":"2","\#u{C7}":"c","\#u{212B}":"angstrom","🙂":"\""}}"#),
        Case(
            "a map with zero values", ListReportsResponse(counts: ["zero": 0, "one": 1]),
            golden: #"{"counts":{"one":1,"zero":0}}"#),
        Case(
            "a map of messages",
            BulkKickMembersResponse(results: ["b": UserResult(), "a": UserResult(ok: true, seq: 7)]),
            golden: #"{"results":{"a":{"ok":true,"seq":"7"},"b":{}}}"#),
        Case(
            "repeated scalars, enums and messages",
            SubscribeRequest(userUID: "u", guids: ["g1", "g2"], actions: [.kicked, .init(rawValue: 77)])),
        Case("empty repeated fields left out", SubscribeRequest(guids: [], actions: []), golden: "{}"),
        Case("a oneof member at zero is printed", SubscribeRequest(start: .afterSeq(0)), golden: #"{"afterSeq":"0"}"#),
        Case("bytes in base64", EchoRequest(payload: [0, 1, 0xFF]), golden: #"{"payload":"AAH/"}"#),
        Case("bytes needing padding", EchoRequest(payload: [0xFB, 0xFF]), golden: #"{"payload":"+/8="}"#),
        Case("empty bytes left out", EchoRequest(payload: []), golden: "{}"),
        Case(
            "repeated int32",
            Grpc_Reflection_V1_ExtensionNumberResponse(baseTypeName: "t", extensionNumber: [-1, 0, .max]),
            golden: #"{"baseTypeName":"t","extensionNumber":[-1,0,2147483647]}"#),
        Case(
            "repeated bytes",
            Grpc_Reflection_V1_FileDescriptorResponse(fileDescriptorProto: [[], [0x61], [1, 2, 3]]),
            golden: #"{"fileDescriptorProto":["","YQ==","AQID"]}"#),
        Case(
            "Any as a plain message", Google_Protobuf_Any(typeURL: "type.googleapis.com/x", value: [1]),
            golden: #"{"typeUrl":"type.googleapis.com/x","value":"AQ=="}"#),
    ]

    @Test("Edge cases", arguments: cases)
    func edgeCase(_ edge: Case) throws {
        let json = try edge.check()
        if let golden = edge.golden {
            #expect(json == golden)
            #expect(Array(json.utf8) == Array(golden.utf8))
        }
    }

    /// The forms of floats and doubles (no generated message has one): `ProtoJSONWriter`'s against
    /// the descriptor-driven encoder's on `test.v1.Scalars`.
    @Test(
        "Doubles and floats",
        arguments: [
            0.1, -0.0, 1e21, 1e15, 999_999_999_999_999, 123_456_789_012_345, 5e-324, -1.5e300, 1e-7,
            .greatestFiniteMagnitude, .nan, .infinity, -.infinity, 3,
        ] as [Double])
    func floatingPoint(_ value: Double) throws {
        let descriptor = try scalars()
        var fields: [(String, (inout [UInt8]) -> Void)] = [("d", { ProtoJSONWriter.double(value, &$0) })]
        // (A float that rounds to +0 is a zero, which the dynamic message does not print.)
        if Float(value) != 0 || Float(value).sign == .minus {
            fields.append(("f", { ProtoJSONWriter.float(Float(value), &$0) }))
        }
        for (field, write) in fields {
            var message = DynamicMessage(descriptor)
            try message.set(field, to: field == "d" ? .double(value) : .float(Float(value)))
            var generated = Array(#"{"\#(field)":"#.utf8)
            write(&generated)
            generated.append(UInt8(ascii: "}"))
            #expect(String(decoding: generated, as: UTF8.self) == message.jsonString())
        }
    }

    /// Map keys that are not strings (no generated message has one): `ProtoJSONWriter`'s keys
    /// and order against the descriptor-driven encoder's on `test.v1.Scalars`.
    @Test func integerAndBoolMapKeys() throws {
        let descriptor = try scalars()
        var message = DynamicMessage(descriptor)
        let byInt: [Int32: String] = [-1: "m", 0: "z", 7: "s", .min: "min"]
        let byBool: [Bool: Int32] = [true: 1, false: 0]
        try message.set("by_int", to: .map(Dictionary(uniqueKeysWithValues: byInt.map { (.int32($0), .string($1)) })))
        try message.set(
            "by_bool", to: .map(Dictionary(uniqueKeysWithValues: byBool.map { (.bool($0), .enumNumber($1)) })))
        var generated = Array(#"{"byInt":"#.utf8)
        var start = ProtoJSONWriter.begin(&generated)
        for entry in ProtoJSONWriter.sortedEntries(byInt) {
            ProtoJSONWriter.raw(",", &generated)
            ProtoJSONWriter.key(entry.key, &generated)
            ProtoJSONWriter.raw(":", &generated)
            ProtoJSONWriter.string(entry.value, &generated)
        }
        ProtoJSONWriter.endObject(&generated, from: start)
        ProtoJSONWriter.raw(#","byBool":"#, &generated)
        start = ProtoJSONWriter.begin(&generated)
        for entry in ProtoJSONWriter.sortedEntries(byBool) {
            ProtoJSONWriter.raw(",", &generated)
            ProtoJSONWriter.key(entry.key, &generated)
            ProtoJSONWriter.raw(":", &generated)
            ProtoJSONWriter.enumValue(TestColor(rawValue: entry.value), &generated)
        }
        ProtoJSONWriter.endObject(&generated, from: start)
        ProtoJSONWriter.raw("}", &generated)
        #expect(String(decoding: generated, as: UTF8.self) == message.jsonString())
    }
}

/// `test.v1.Color` as the generator would write it, for `integerAndBoolMapKeys`.
private enum TestColor: ProtoEnum {
    case unspecified, red
    case unrecognized(Int32)

    static let protoName = "test.v1.Color"
    static let allKnown: [Self] = [.unspecified, .red]

    init(rawValue: Int32) {
        switch rawValue {
        case 0: self = .unspecified
        case 1: self = .red
        default: self = .unrecognized(rawValue)
        }
    }

    var rawValue: Int32 {
        switch self {
        case .unspecified: 0
        case .red: 1
        case .unrecognized(let value): value
        }
    }

    var protoValueName: String? {
        switch self {
        case .unspecified: "COLOR_UNSPECIFIED"
        case .red: "COLOR_RED"
        case .unrecognized: nil
        }
    }
}
