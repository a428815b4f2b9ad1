import ProtoSchema
import SeededRandom
import TestSupport
import Testing

@Suite("JSON errors are clear and never crash")
struct JSONErrorTests {
    private func refusal(_ json: String, as name: String, options: JSONParseOptions = JSONParseOptions()) throws
        -> ProtoSchemaError
    {
        let descriptor = name.hasPrefix("test.") ? try scalars() : try messageType(name)
        do {
            let message = try DynamicMessage(jsonString: json, as: descriptor, options: options)
            Issue.record("accepted: \(message)")
            return ProtoSchemaError(code: .invalidValue, message: "")
        } catch {
            return error
        }
    }

    @Test(
        "Invalid JSON is refused with its line and column",
        arguments: [
            (
                #"{"guid": "g", "uid" "u"}"#,
                "invalid JSON at line 1 column 21: expected ':' after the member name \"uid\", got '\"'"
            ),
            (#"{"guid": "g",}"#, "invalid JSON at line 1 column 14: expected a member name in double quotes, got '}'"),
            (
                "{\n  \"guid\": \"g\"\n  \"uid\": \"u\"\n}",
                "invalid JSON at line 3 column 3: expected ',' or '}' after an object member, got '\"'"
            ),
            (#"{"guid": 'g'}"#, "invalid JSON at line 1 column 10: expected a value, got '''"),
            (
                #"{"guid": "g""#,
                "invalid JSON at line 1 column 13: expected ',' or '}' after an object member, got the end of the input"
            ),
            (#"{"guid": "g"} x"#, "invalid JSON at line 1 column 15: unexpected 'x' after the JSON value"),
            (#"{"guid": "abc"#, "invalid JSON at line 1 column 10: string is not closed"),
            (#"{"limit": 012}"#, "invalid JSON at line 1 column 11: invalid number \"012\""),
            (#"{"limit": 1.}"#, "invalid JSON at line 1 column 11: invalid number \"1.\""),
            (#"{"limit": -}"#, "invalid JSON at line 1 column 11: invalid number \"-\""),
            (#"{"guid": tru}"#, "invalid JSON at line 1 column 10: expected a value, got 't'"),
            (#"{"guid": "a\x"}"#, "invalid JSON at line 1 column 12: invalid escape sequence \"\\\\x\""),
            (
                #"{"guid": "\ud83d"}"#,
                "invalid JSON at line 1 column 11: \\uD83D is a high surrogate without a low surrogate after it"
            ),
            (
                #"{"guid": "\ude42"}"#,
                "invalid JSON at line 1 column 11: \\uDE42 is a low surrogate without a high surrogate before it"
            ),
            (
                #"{"guid": "\ud83d\u0041"}"#,
                "invalid JSON at line 1 column 17: \\u0041 after a high surrogate is not a low surrogate"
            ),
            (#"{"guid": "\u12"}"#, "invalid JSON at line 1 column 11: \\u must be followed by four hexadecimal digits"),
            (
                "{\"guid\": \"a\tb\"}",
                "invalid JSON at line 1 column 12: control character U+0009 in a string must be escaped"
            ),
            (#"{"é": 1 2}"#, "invalid JSON at line 1 column 9: expected ',' or '}' after an object member, got '2'"),
            ("", "invalid JSON at line 1 column 1: expected a value, got the end of the input"),
        ])
    func invalidJSON(_ json: String, _ message: String) throws {
        let error = try refusal(json, as: "moderation.v1.ListMembersRequest")
        #expect(error.code == .invalidJSON)
        #expect(error.message == message)
    }

    @Test func invalidUTF8IsRefused() throws {
        let bytes: [UInt8] = Array(#"{"guid": "a"#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        #expect(
            throws: ProtoSchemaError(
                code: .invalidJSON, message: "invalid JSON at line 1 column 10: string is not valid UTF-8")
        ) {
            try DynamicMessage(jsonUTF8: bytes, as: try messageType("moderation.v1.ListMembersRequest"))
        }
    }

    @Test func deepNestingIsRefusedNotRecursedInto() throws {
        let deep = String(repeating: "[", count: 100_000)
        let error = try refusal(#"{"guids": \#(deep)}"#, as: "moderation.v1.SubscribeRequest")
        #expect(error.message == "invalid JSON at line 1 column 522: arrays and objects nested more than 512 deep")
        // Messages nested past the limit, in valid JSON.
        var json = "{}"
        for _ in 0..<120 { json = #"{"child": \#(json)}"# }
        let tooDeep = try refusal(json, as: "test.v1.Scalars")
        #expect(tooDeep.code == .invalidJSONValue)
        #expect(tooDeep.message.hasSuffix("messages nested more than 100 deep"))
        #expect(tooDeep.message.hasPrefix(#"field "child.child.child"#))
    }

    @Test(
        "Values that do not fit the message name the field and say what was wrong",
        arguments: [
            (
                "moderation.v1.CreateUserRequest", #"{"nmae": "x"}"#,
                #"unknown field "nmae" in moderation.v1.CreateUserRequest (did you mean "name"?)"#
            ),
            (
                "moderation.v1.Action", #"{"action_by": {"uid": "u", "craetedAt": 1}}"#,
                #"unknown field "craetedAt" in moderation.v1.User at "action_by" of moderation.v1.Action (did you mean "createdAt"?)"#
            ),
            (
                "moderation.v1.CreateUserRequest", #"{"zzzzzz": "x"}"#,
                #"unknown field "zzzzzz" in moderation.v1.CreateUserRequest"#
            ),
            (
                "moderation.v1.ListMembersRequest", #"{"limit": "ten"}"#,
                #"field "limit" of moderation.v1.ListMembersRequest: expected a number, got a string "ten""#
            ),
            (
                "moderation.v1.ListMembersRequest", #"{"limit": 4294967296}"#,
                #"field "limit" of moderation.v1.ListMembersRequest: 4294967296 is out of range for uint32"#
            ),
            (
                "moderation.v1.ListMembersRequest", #"{"limit": -1}"#,
                #"field "limit" of moderation.v1.ListMembersRequest: -1 is out of range for uint32"#
            ),
            (
                "moderation.v1.ListMembersRequest", #"{"limit": 1.5}"#,
                #"field "limit" of moderation.v1.ListMembersRequest: expected an integer, got a number 1.5"#
            ),
            (
                "test.v1.Scalars", #"{"i32": 2147483648}"#,
                #"field "i32" of test.v1.Scalars: 2147483648 is out of range for int32"#
            ),
            (
                "test.v1.Scalars", #"{"i32": "-2147483649"}"#,
                #"field "i32" of test.v1.Scalars: -2147483649 is out of range for int32"#
            ),
            (
                "test.v1.Scalars", #"{"i64": "9223372036854775808"}"#,
                #"field "i64" of test.v1.Scalars: 9223372036854775808 is out of range for int64"#
            ),
            (
                "test.v1.Scalars", #"{"u64": "18446744073709551616"}"#,
                #"field "u64" of test.v1.Scalars: 18446744073709551616 is out of range for uint64"#
            ),
            (
                "test.v1.Scalars", #"{"u64": 1e400}"#,
                #"field "u64" of test.v1.Scalars: 1e400 is out of range for uint64"#
            ),
            (
                "test.v1.Scalars", #"{"i64": " 1"}"#,
                #"field "i64" of test.v1.Scalars: expected a number, got a string " 1""#
            ),
            (
                "test.v1.Scalars", #"{"f": 1e39}"#,
                #"field "f" of test.v1.Scalars: 1e39 is out of range for float"#
            ),
            (
                "test.v1.Scalars", #"{"d": "1e999"}"#,
                #"field "d" of test.v1.Scalars: 1e999 is out of range for double"#
            ),
            (
                "test.v1.Scalars", #"{"d": "nan"}"#,
                #"field "d" of test.v1.Scalars: expected a number, got a string "nan""#
            ),
            (
                "test.v1.Scalars", #"{"b": "true"}"#,
                #"field "b" of test.v1.Scalars: expected true or false, got a string "true""#
            ),
            (
                "test.v1.Scalars", #"{"s": 5}"#,
                #"field "s" of test.v1.Scalars: expected a string, got a number 5"#
            ),
            (
                "moderation.v1.Group", #"{"type": "GROUP_TYPE_PUBLICC"}"#,
                #"field "type" of moderation.v1.Group: "GROUP_TYPE_PUBLICC" is not a value of enum moderation.v1.GroupType (did you mean "GROUP_TYPE_PUBLIC"?); its values: GROUP_TYPE_UNSPECIFIED, GROUP_TYPE_PUBLIC, GROUP_TYPE_PASSWORD, GROUP_TYPE_PRIVATE"#
            ),
            (
                "moderation.v1.Group", #"{"type": "GROUP_TYPE_PRIV"}"#,
                #"field "type" of moderation.v1.Group: "GROUP_TYPE_PRIV" is not a value of enum moderation.v1.GroupType (did you mean "GROUP_TYPE_PRIVATE"?); its values: GROUP_TYPE_UNSPECIFIED, GROUP_TYPE_PUBLIC, GROUP_TYPE_PASSWORD, GROUP_TYPE_PRIVATE"#
            ),
            (
                "moderation.v1.Group", #"{"type": "public"}"#,
                #"field "type" of moderation.v1.Group: "public" is not a value of enum moderation.v1.GroupType (did you mean "GROUP_TYPE_PUBLIC"?); its values: GROUP_TYPE_UNSPECIFIED, GROUP_TYPE_PUBLIC, GROUP_TYPE_PASSWORD, GROUP_TYPE_PRIVATE"#
            ),
            (
                "moderation.v1.Group", #"{"type": "SECRET"}"#,
                #"field "type" of moderation.v1.Group: "SECRET" is not a value of enum moderation.v1.GroupType; its values: GROUP_TYPE_UNSPECIFIED, GROUP_TYPE_PUBLIC, GROUP_TYPE_PASSWORD, GROUP_TYPE_PRIVATE"#
            ),
            (
                "moderation.v1.CreateUserRequest", #"{"nam": "x"}"#,
                #"unknown field "nam" in moderation.v1.CreateUserRequest (did you mean "name"?)"#
            ),
            (
                "moderation.v1.Group", #"{"type": true}"#,
                #"field "type" of moderation.v1.Group: expected the name or number of a moderation.v1.GroupType value, got true"#
            ),
            (
                "moderation.v1.Group", #"{"type": 2147483648}"#,
                #"field "type" of moderation.v1.Group: 2147483648 is out of range for int32"#
            ),
            (
                "mrpc.diagnostics.v1.EchoRequest", #"{"payload": "ab$d"}"#,
                #"field "payload" of mrpc.diagnostics.v1.EchoRequest: invalid base64: character "$" at position 3"#
            ),
            (
                "mrpc.diagnostics.v1.EchoRequest", #"{"payload": "abcde"}"#,
                #"field "payload" of mrpc.diagnostics.v1.EchoRequest: invalid base64: length 5 is not a whole number of base64 groups"#
            ),
            (
                "mrpc.diagnostics.v1.EchoRequest", #"{"payload": "ab="}"#,
                #"field "payload" of mrpc.diagnostics.v1.EchoRequest: invalid base64: wrong padding"#
            ),
            (
                "moderation.v1.GetUserResponse", #"{"user": []}"#,
                #"field "user" of moderation.v1.GetUserResponse: expected an object for moderation.v1.User, got an array"#
            ),
            (
                "moderation.v1.GetUserResponse", #"[]"#,
                #"moderation.v1.GetUserResponse: expected an object for moderation.v1.GetUserResponse, got an array"#
            ),
            (
                "moderation.v1.Group", #"{"tags": "a"}"#,
                #"field "tags" of moderation.v1.Group: expected an array, got a string "a""#
            ),
            (
                "moderation.v1.Group", #"{"tags": ["a", null]}"#,
                #"field "tags[1]" of moderation.v1.Group: an array element cannot be null"#
            ),
            (
                "moderation.v1.Group", #"{"metadata": ["a"]}"#,
                #"field "metadata" of moderation.v1.Group: expected an object (a map), got an array"#
            ),
            (
                "moderation.v1.Group", #"{"metadata": {"k": 1}}"#,
                #"field "metadata["k"]" of moderation.v1.Group: expected a string, got a number 1"#
            ),
            (
                "moderation.v1.Group", #"{"metadata": {"k": null}}"#,
                #"field "metadata["k"]" of moderation.v1.Group: a map value cannot be null"#
            ),
            (
                "moderation.v1.Group", #"{"metadata": {"k": "a", "k": "b"}}"#,
                #"field "metadata["k"]" of moderation.v1.Group: map key given twice"#
            ),
            (
                "test.v1.Scalars", #"{"byInt": {"one": "x"}}"#,
                #"field "byInt["one"]" of test.v1.Scalars: expected an integer map key, got "one""#
            ),
            (
                "test.v1.Scalars", #"{"byBool": {"yes": 1}}"#,
                #"field "byBool["yes"]" of test.v1.Scalars: expected a bool map key ("true" or "false"), got "yes""#
            ),
            (
                "moderation.v1.AddMembersRequest",
                #"{"members": [{"uid": "a"}, {"uid": "b", "scope": "SCOPE_OWNER"}]}"#,
                #"field "members[1].scope" of moderation.v1.AddMembersRequest: "SCOPE_OWNER" is not a value of enum moderation.v1.Scope; its values: SCOPE_UNSPECIFIED, SCOPE_ADMIN, SCOPE_MODERATOR, SCOPE_PARTICIPANT"#
            ),
            (
                "moderation.v1.CreateGroupResponse", #"{"results": {"u1": {"seq": "x"}}}"#,
                #"field "results["u1"].seq" of moderation.v1.CreateGroupResponse: expected a number, got a string "x""#
            ),
            (
                "moderation.v1.SubscribeRequest", #"{"userUid": "a", "user_uid": "b"}"#,
                #"field "user_uid" of moderation.v1.SubscribeRequest is given twice (also as "userUid")"#
            ),
            (
                "moderation.v1.SubscribeRequest", #"{"userUid": "a", "userUid": "b"}"#,
                #"field "userUid" of moderation.v1.SubscribeRequest is given twice"#
            ),
            (
                "test.v1.Scalars", #"{"text": "a", "nested": {}}"#,
                #"test.v1.Scalars: fields "text" and "nested" are both members of oneof "choice"; set at most one"#
            ),
            (
                "test.v1.Scalars", #"{"child": {"nested": {"text": "a", "nested": null}, "text": "b"}}"#,
                #"field "child" of test.v1.Scalars: fields "nested" and "text" are both members of oneof "choice"; set at most one"#
            ),
        ])
    func mappingErrors(_ type: String, _ json: String, _ message: String) throws {
        let error = try refusal(json, as: type)
        #expect(error.code == .invalidJSONValue)
        #expect(error.message == message)
    }

    @Test func aOneofMemberGivenAsNullDoesNotCount() throws {
        let message = try DynamicMessage(jsonString: #"{"text": null, "nested": {}}"#, as: scalars())
        #expect(message.setField(of: message.descriptor.oneofs[0])?.name == "nested")
    }

    @Test func randomAndMutatedJSONNeverCrashes() throws {
        let descriptor = try messageType("moderation.v1.CreateGroupRequest")
        let valid = Array(
            #"{"guid":"g","name":"n","type":"GROUP_TYPE_PUBLIC","metadata":{"k":"v"},"tags":["a"],"members":[{"uid":"u","scope":2}],"bannedUids":[]}"#
                .utf8)
        let alphabet = Array(#"{}[]":,\0123456789.eE+-truefalsnul "#.utf8) + [0xC3, 0xFF, 0x0A]
        var rng = SplitMix64(seed: 0x150)
        var accepted = 0
        for round in 0..<2000 {
            var bytes = valid
            if round % 3 == 0 {
                bytes = (0..<Int.random(in: 0...40, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }
            } else {
                for _ in 0..<Int.random(in: 1...3, using: &rng) {
                    let i = Int.random(in: 0..<bytes.count, using: &rng)
                    if Bool.random(using: &rng) {
                        bytes[i] = alphabet.randomElement(using: &rng)!
                    } else {
                        bytes.remove(at: i)
                    }
                }
            }
            do {
                let message = try DynamicMessage(jsonUTF8: bytes, as: descriptor)
                accepted += 1
                #expect(try DynamicMessage(jsonString: message.jsonString(), as: descriptor) == message)
            } catch {
                #expect(error.code == .invalidJSON || error.code == .invalidJSONValue)
                #expect(!error.message.isEmpty)
            }
        }
        #expect(accepted > 0 && accepted < 2000)
    }
}
