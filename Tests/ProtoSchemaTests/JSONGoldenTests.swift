import ModerationMessages
import ProtoBridge
import ProtoSchema
import RPCMessages
import TestSupport
import Testing

@Suite("proto3 JSON mapping, golden cases")
struct JSONGoldenTests {
    /// A generated message as a dynamic one, through the wire.
    private func dynamic<M: ProtoMessage>(_ value: M) throws -> DynamicMessage {
        try DynamicMessage(serializedBytes: value.serializedBytes(), as: messageType(M.protoName))
    }

    @Test func int64AsStringsEnumsByNameNestedMessagesInDeclarationOrder() throws {
        let action = Action(
            seq: 18_446_744_073_709_551_615, action: .kicked, actionBy: User(uid: "admin", createdAt: -5),
            actionFor: Group(guid: "g1", type: .password, tags: ["a", "b"], membersCount: 4_000_000_000, version: 3),
            oldScope: .moderator, reason: "spam", expiresAt: 9_007_199_254_740_993)
        #expect(
            try dynamic(action).jsonString() == """
                {"seq":"18446744073709551615","action":"ACTION_TYPE_KICKED","actionBy":{"uid":"admin","createdAt":"-5"},\
                "actionFor":{"guid":"g1","type":"GROUP_TYPE_PASSWORD","tags":["a","b"],"membersCount":4000000000,"version":"3"},\
                "oldScope":"SCOPE_MODERATOR","reason":"spam","expiresAt":"9007199254740993"}
                """)
    }

    @Test func bytesAreStandardBase64WithPadding() throws {
        #expect(try dynamic(EchoRequest(payload: [0, 1, 0xFF])).jsonString() == #"{"payload":"AAH/"}"#)
        #expect(try dynamic(EchoRequest(payload: [0xFB, 0xFF])).jsonString() == #"{"payload":"+/8="}"#)
        #expect(try dynamic(EchoRequest(payload: [0x61])).jsonString() == #"{"payload":"YQ=="}"#)
    }

    @Test(
        "Bytes are read from standard or URL-safe base64, padded or not",
        arguments: [
            "+/8=", "+/8", "-_8=", "-_8",
        ])
    func base64Input(_ text: String) throws {
        let message = try DynamicMessage(
            jsonString: #"{"payload":"\#(text)"}"#, as: messageType("mrpc.diagnostics.v1.EchoRequest"))
        #expect(message["payload"] == .bytes([0xFB, 0xFF]))
    }

    @Test func mapsAreObjectsWithSortedKeys() throws {
        let header = CallHeader(method: "/a.B/C", metadata: ["zeta": "1", "alpha": "2", "Émile": "3", "": "4"])
        #expect(
            try dynamic(header).jsonString()
                == #"{"method":"/a.B/C","metadata":{"":"4","alpha":"2","zeta":"1","Émile":"3"}}"#)
        let response = BulkKickMembersResponse(results: [
            "u2": UserResult(ok: true, seq: 7), "u1": UserResult(errorCode: "ERR_NOT_A_MEMBER"),
        ])
        #expect(
            try dynamic(response).jsonString()
                == #"{"results":{"u1":{"errorCode":"ERR_NOT_A_MEMBER"},"u2":{"ok":true,"seq":"7"}}}"#)
    }

    @Test func numericAndBoolMapKeysAreStrings() throws {
        let scalars = try scalars()
        let message = try DynamicMessage(
            jsonString:
                #"{"byInt":{"10":"ten","-2":"minus two","3":"three"},"byBool":{"true":"COLOR_RED","false":2},"byU64":{"18446744073709551615":{}}}"#,
            as: scalars)
        #expect(
            message.jsonString()
                == #"{"byInt":{"-2":"minus two","3":"three","10":"ten"},"byBool":{"false":"COLOR_GREEN","true":"COLOR_RED"},"byU64":{"18446744073709551615":{}}}"#
        )
    }

    @Test func oneofMembersArePrintedWhenSetEvenAsZero() throws {
        #expect(
            try dynamic(SubscribeRequest(userUID: "u", start: .afterSeq(0))).jsonString()
                == #"{"userUid":"u","afterSeq":"0"}"#)
        #expect(try dynamic(SubscribeRequest(userUID: "u")).jsonString() == #"{"userUid":"u"}"#)
        let parsed = try DynamicMessage(
            jsonString: #"{"after_seq":"0"}"#, as: messageType("moderation.v1.SubscribeRequest"))
        #expect(
            try SubscribeRequest(serializedBytes: parsed.serializedBytes()) == SubscribeRequest(start: .afterSeq(0)))
    }

    @Test func unknownEnumNumbersArePrintedAsNumbers() throws {
        var bytes: [UInt8] = []
        Wire.tag(4, wireType: 0, into: &bytes)
        Wire.varint(42, into: &bytes)
        let member = try DynamicMessage(serializedBytes: bytes, as: messageType("moderation.v1.GroupMember"))
        #expect(member.jsonString() == #"{"scope":42}"#)
        #expect(try DynamicMessage(jsonString: #"{"scope":42}"#, as: member.descriptor).serializedBytes() == bytes)
    }

    @Test func emitDefaultsPrintsEveryFieldButUnsetOneofMembers() throws {
        let options = JSONFormatOptions(emitDefaults: true)
        #expect(try dynamic(KickMemberRequest()).jsonString(options: options) == #"{"guid":"","uid":""}"#)
        #expect(
            try dynamic(User(uid: "u")).jsonString(options: options)
                == #"{"uid":"u","name":"","avatar":"","metadata":{},"createdAt":"0"}"#)
        #expect(
            try dynamic(SubscribeRequest()).jsonString(options: options)
                == #"{"userUid":"","guids":[],"wholeApp":false,"actions":[]}"#)
        #expect(try dynamic(GetUserResponse()).jsonString(options: options) == #"{"user":null}"#)
        #expect(
            try dynamic(HealthCheckResponse()).jsonString(options: options)
                == #"{"status":"SERVING_STATUS_UNSPECIFIED"}"#)
        #expect(try dynamic(EchoRequest()).jsonString(options: options) == #"{"payload":""}"#)
        #expect(try dynamic(KickMemberRequest()).jsonString() == "{}")
    }

    @Test func prettyPrintingIndentsByTwoSpaces() throws {
        let group = Group(guid: "g", metadata: ["k": "v"], tags: ["x", "y"], membersCount: 2)
        #expect(
            try dynamic(group).jsonString(options: JSONFormatOptions(pretty: true)) == """
                {
                  "guid": "g",
                  "metadata": {
                    "k": "v"
                  },
                  "tags": [
                    "x",
                    "y"
                  ],
                  "membersCount": 2
                }
                """)
        #expect(
            try dynamic(GetUserResponse(user: User())).jsonString(options: JSONFormatOptions(pretty: true)) == """
                {
                  "user": {}
                }
                """)
        #expect(
            try dynamic(ListMembersRequest()).jsonString(options: JSONFormatOptions(emitDefaults: true, pretty: true))
                == """
                {
                  "guid": "",
                  "limit": 0,
                  "cursor": "",
                  "scopes": [],
                  "search": "",
                  "mutedOnly": false
                }
                """)
    }

    @Test func protoFieldNamesOnRequest() throws {
        let member = GroupMember(uid: "u", joinedAt: 5)
        #expect(
            try dynamic(member).jsonString(options: JSONFormatOptions(preserveProtoFieldNames: true))
                == #"{"uid":"u","joined_at":"5"}"#)
    }

    @Test func stringsAreEscapedOnlyWhereJSONRequires() throws {
        let request = KickMemberRequest(guid: "quote\" back\\slash\n\t\u{1}/é🙂", uid: "")
        #expect(try dynamic(request).jsonString() == #"{"guid":"quote\" back\\slash\n\t\u0001/é🙂"}"#)
    }

    @Test func floatingPointValues() throws {
        let scalars = try scalars()
        var message = DynamicMessage(scalars)
        try message.set("d", to: .double(0.1))
        try message.set("f", to: .float(-1.5))
        try message.set(
            "doubles",
            to: .list([
                .double(.nan), .double(.infinity), .double(-.infinity), .double(1e300), .double(3), .double(-0.0),
            ]))
        #expect(message.jsonString() == #"{"d":0.1,"f":-1.5,"doubles":["NaN","Infinity","-Infinity",1e+300,3,-0]}"#)
    }

    @Test func everyScalarTypeOfTheHandBuiltSchema() throws {
        let scalars = try scalars()
        var message = DynamicMessage(scalars)
        try message.set("i64", to: .int64(.min))
        try message.set("u64", to: .uint64(.max))
        try message.set("i32", to: .int32(.min))
        try message.set("u32", to: .uint32(.max))
        try message.set("f64", to: .uint64(1))
        try message.set("sf64", to: .int64(-1))
        try message.set("s64", to: .int64(-2))
        try message.set("s32", to: .int32(-3))
        try message.set("sf32", to: .int32(-4))
        try message.set("f32", to: .uint32(5))
        try message.set("b", to: .bool(true))
        try message.set("color", to: .enumNumber(-1))
        try message.set("json_named", to: .string("c"))
        try message.set("maybe", to: .int32(0))
        try message.set("inner", to: .message(DynamicMessage(scalars.field(named: "inner")!.messageType!)))
        #expect(
            message.jsonString() == """
                {"i64":"-9223372036854775808","u64":"18446744073709551615","i32":-2147483648,"f64":"1","f32":5,"b":true,\
                "u32":4294967295,"color":"COLOR_NEGATIVE","sf32":-4,"sf64":"-1","s32":-3,"s64":"-2","maybe":0,"custom":"c","inner":{}}
                """)
    }

    @Test(
        "Integers are read from numbers and strings, exactly",
        arguments: [
            (#"{"limit": 10}"#, 10), (#"{"limit": "10"}"#, 10), (#"{"limit": 1e1}"#, 10), (#"{"limit": 10.0}"#, 10),
            (#"{"limit": "4294967295"}"#, 4_294_967_295), (#"{"limit": -0}"#, 0), (#"{"limit": 0.5e1}"#, 5),
            (#"{"limit": 0.00000000000000000000000000001e29}"#, 1), (#"{"limit": 100e-2}"#, 1),
            (#"{"limit": "1E+2"}"#, 100),
            (#"{"limit": -0.0e-5}"#, 0), (#"{"limit": 42949672.95e2}"#, 4_294_967_295),
        ] as [(String, UInt32)])
    func integerInput(_ json: String, _ expected: UInt32) throws {
        let message = try DynamicMessage(jsonString: json, as: messageType("moderation.v1.ListGroupsRequest"))
        #expect(message.value(of: message.descriptor.field(named: "limit")!) == .uint32(expected))
    }

    @Test func largeIntegersStayExact() throws {
        let descriptor = try messageType("moderation.v1.Action")
        for (json, expected) in [
            (#"{"expiresAt": "9007199254740993"}"#, Int64(9_007_199_254_740_993)),
            (#"{"expiresAt": 9007199254740993}"#, 9_007_199_254_740_993),
            (#"{"expiresAt": "-9223372036854775808"}"#, .min),
            (#"{"expiresAt": 9.223372036854775807e18}"#, .max),
        ] {
            let message = try DynamicMessage(jsonString: json, as: descriptor)
            #expect(message["expiresAt"] == .int64(expected), "\(json)")
        }
        let seq = try DynamicMessage(jsonString: #"{"seq":"18446744073709551615"}"#, as: descriptor)
        #expect(seq["seq"] == .uint64(.max))
    }

    @Test func inputAcceptsProtoNamesEnumNumbersNullAndFloats() throws {
        let descriptor = try messageType("moderation.v1.ListGroupsRequest")
        let message = try DynamicMessage(
            jsonString:
                #" { "joined_only" : true, "types": ["GROUP_TYPE_PUBLIC", 3, 99], "tags": null, "search": null, "cursor": "c\u00e9\ud83d\ude42" } "#,
            as: descriptor)
        #expect(
            message.jsonString()
                == #"{"cursor":"cé🙂","joinedOnly":true,"types":["GROUP_TYPE_PUBLIC","GROUP_TYPE_PRIVATE",99]}"#)
        let scalars = try scalars()
        let floats = try DynamicMessage(
            jsonString: #"{"d":"1.5","f":"-Infinity","doubles":["NaN",1E2,"-0"]}"#, as: scalars)
        #expect(floats.jsonString() == #"{"d":1.5,"f":"-Infinity","doubles":["NaN",100,-0]}"#)
    }

    @Test func ignoringUnknownFieldsOnRequest() throws {
        let descriptor = try messageType("moderation.v1.KickMemberRequest")
        let message = try DynamicMessage(
            jsonString: #"{"guid":"g","extra":{"deep":[1,2]},"uid":"u"}"#, as: descriptor,
            options: JSONParseOptions(ignoreUnknownFields: true))
        #expect(message.jsonString() == #"{"guid":"g","uid":"u"}"#)
    }
}
