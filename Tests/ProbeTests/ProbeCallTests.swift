import ModerationMessages
import RPCMessages
import TestSupport
import Testing

/// `rpc-probe call` against the real moderation-server: JSON in and out under the proto3 mapping,
/// the request from an argument, a file or standard input, the envelope, and every way a call
/// fails with the exit code it gives.
@Suite("rpc-probe call")
struct ProbeCallTests {
    @Test("a created user comes back as proto3 JSON: lowerCamelCase names, int64 as a string, pretty-printed")
    func createUser() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        let created = try probe.run(
            "call", moderation("CreateUser"), "-d", #"{"uid":"alice","name":"Alice","metadata":{"team":"blue"}}"#)
        #expect(created.isCleanSuccess, "\(created)")
        let user = try message(CreateUserResponse.self, fromJSON: created.standardOutput).user
        #expect(user?.uid == "alice")
        #expect(user?.name == "Alice")
        #expect(user?.metadata == ["team": "blue"])
        let createdAt = try #require(user?.createdAt)
        #expect(
            created.standardOutput.contains(#""createdAt": "\#(createdAt)""#),
            "int64 is a JSON string: \(created.standardOutput)")
        #expect(created.standardOutput.hasPrefix("{\n  \"user\": {\n"), "one response is pretty-printed")
        #expect(!created.standardOutput.contains("avatar"), "default values are left out without --emit-defaults")

        let read = try probe.run("call", moderation("GetUser"), "-d", #"{"uid":"alice"}"#, "--emit-defaults")
        #expect(read.isCleanSuccess, "\(read)")
        let fields = try JSON(parsing: read.standardOutput)["user"]
        #expect(fields.keys == ["uid", "name", "avatar", "metadata", "createdAt"])
        #expect(fields["avatar"].string == "")
        #expect(fields["createdAt"].string == String(createdAt))
    }

    @Test(
        "enums are read and printed by name (numbers accepted on input), proto field names accepted, --as acts for the user"
    )
    func enumsAndActingUser() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        #expect(try probe.run("call", moderation("CreateUser"), "-d", #"{"uid":"alice"}"#).exitCode == 0)
        let group = try probe.run(
            "--as", "alice", "call", moderation("CreateGroup"),
            "-d", #"{"guid":"hiking","name":"Hiking","type":"GROUP_TYPE_PUBLIC","tags":["outdoor"]}"#)
        #expect(group.isCleanSuccess, "\(group)")
        let created = try message(CreateGroupResponse.self, fromJSON: group.standardOutput).group
        #expect(created?.owner == "alice", "--as reached the server as on_behalf_of")
        #expect(created?.type == .public)
        #expect(group.standardOutput.contains(#""type": "GROUP_TYPE_PUBLIC""#))
        #expect(group.standardOutput.contains(#""scope": "SCOPE_ADMIN""#))

        let byNumber = try probe.run(
            "call", moderation("CreateGroup"), "-d", #"{"guid":"second","name":"Second","type":1,"owner":"alice"}"#)
        #expect(byNumber.exitCode == 0, "\(byNumber)")
        let listed = try probe.run(
            "--as", "alice", "call", moderation("ListGroups"), "-d",
            #"{"joined_only":true,"types":["GROUP_TYPE_PUBLIC"]}"#)
        #expect(listed.exitCode == 0, "\(listed)")
        let guids = try message(ListGroupsResponse.self, fromJSON: listed.standardOutput).groups.map(\.guid)
        #expect(Set(guids) == ["hiking", "second"])
    }

    @Test("bytes are base64 both ways, and the request is read from -d @FILE and -d @- (standard input)")
    func requestSources() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        let inline = try probe.run("call", "mrpc.diagnostics.v1.Diagnostics/Echo", "-d", #"{"payload":"AAH/"}"#)
        #expect(inline.isCleanSuccess, "\(inline)")
        #expect(try JSON(parsing: inline.standardOutput)["payload"].string == "AAH/")

        let file = server.dataDirectory.path + "/request.json"
        let written = try ChildProcess.run(
            executable: "/bin/sh", arguments: ["-c", #"printf '{"payload":"aGVsbG8="}' > "$0""#, file])
        #expect(written.exitCode == 0)
        let fromFile = try probe.run("call", "mrpc.diagnostics.v1.Diagnostics/Echo", "-d", "@" + file)
        #expect(fromFile.isCleanSuccess, "\(fromFile)")
        #expect(try message(EchoResponse.self, fromJSON: fromFile.standardOutput).payload == Array("hello".utf8))

        let fromStandardInput = try probe.run(
            "call", moderation("CreateUser"), "-d", "@-", standardInput: Array(#"{"uid": "stdin-user"}"#.utf8))
        #expect(fromStandardInput.isCleanSuccess, "\(fromStandardInput)")
        #expect(
            try message(CreateUserResponse.self, fromJSON: fromStandardInput.standardOutput).user?.uid == "stdin-user")

        let missing = try probe.run("call", "mrpc.diagnostics.v1.Diagnostics/Echo", "-d", "@/nonexistent/request.json")
        #expect(missing.exitCode == 1)
        #expect(missing.standardError.contains("cannot read /nonexistent/request.json"), "\(missing)")
    }

    @Test("a server error exits 64 + its code and prints code, ERR_ code and message on standard error")
    func serverError() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        #expect(try probe.run("call", moderation("CreateUser"), "-d", #"{"uid":"alice"}"#).exitCode == 0)
        let again = try probe.run("call", moderation("CreateUser"), "-d", #"{"uid":"alice"}"#)
        #expect(again.exitCode == 64 + 6, "ALREADY_EXISTS: \(again)")
        #expect(again.standardOutput.isEmpty)
        #expect(again.standardError.contains("Code: ALREADY_EXISTS (6)"))
        #expect(again.standardError.contains("Error code: ERR_UID_ALREADY_EXISTS"))
        #expect(again.standardError.contains("Message: user alice already exists"))

        let missing = try probe.run("call", moderation("GetGroup"), "-d", #"{"guid":"nosuch"}"#)
        #expect(missing.exitCode == 64 + 5, "NOT_FOUND: \(missing)")
        #expect(missing.standardError.contains("ERR_GROUP_NOT_FOUND"))
    }

    @Test("--emit-envelope prints one JSON object: method, status with the ERR_ code, response, timing")
    func envelope() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        let ok = try probe.run("call", moderation("CreateUser"), "-d", #"{"uid":"alice"}"#, "--emit-envelope")
        #expect(ok.isCleanSuccess, "\(ok)")
        #expect(ok.lines.count == 1, "the envelope is one line")
        let success = try JSON(parsing: ok.standardOutput)
        #expect(success.keys == ["method", "status", "response", "timing"])
        #expect(success["method"].string == "/moderation.v1.Moderation/CreateUser")
        #expect(success["status"].keys == ["code", "codeName", "errorCode", "message", "details"])
        #expect(success["status"]["code"].int == 0)
        #expect(success["status"]["codeName"].string == "OK")
        #expect(success["status"]["errorCode"].string == "")
        #expect(success["response"]["user"]["uid"].string == "alice")
        #expect(success["timing"].keys == ["connectMs", "schemaMs", "callMs", "totalMs"])
        let total = try #require(success["timing"]["totalMs"].double)
        for phase in ["connectMs", "schemaMs", "callMs"] {
            let value = try #require(success["timing"][phase].double, "\(phase) is a number")
            #expect(value >= 0 && value <= total)
        }

        let failed = try probe.run("call", moderation("CreateUser"), "-d", #"{"uid":"alice"}"#, "--emit-envelope")
        #expect(failed.exitCode == 64 + 6, "\(failed)")
        #expect(failed.standardError.isEmpty, "the envelope replaces the text error")
        let failure = try JSON(parsing: failed.standardOutput)
        #expect(failure["status"]["code"].int == 6)
        #expect(failure["status"]["codeName"].string == "ALREADY_EXISTS")
        #expect(failure["status"]["errorCode"].string == "ERR_UID_ALREADY_EXISTS")
        #expect(failure["status"]["message"].string == "user alice already exists")
        #expect(failure["status"]["details"].keys.isEmpty)
        #expect(failure["response"].isNull)
    }

    @Test(
        "a streaming method through call: one JSON object a line; in the envelope, every message and the status ending the stream"
    )
    func streamingCall() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        #expect(try probe.run("call", moderation("CreateUser"), "-d", #"{"uid":"alice"}"#).exitCode == 0)
        #expect(
            try probe.run(
                "--as", "alice", "call", moderation("CreateGroup"), "-d",
                #"{"guid":"g1","name":"G","type":"GROUP_TYPE_PUBLIC"}"#
            ).exitCode == 0)
        let lines = try probe.run(
            "--as", "alice", "--timeout", "1s", "call", moderation("Subscribe"), "-d", #"{"afterSeq":"0"}"#)
        #expect(lines.exitCode == 64 + 4, "the deadline ends the stream: \(lines)")
        // `call` prints a stream as it is: the started message (the stream is live), then the action.
        #expect(lines.lines.count == 2)
        #expect(try message(SubscribeResponse.self, fromJSON: lines.lines[0]).started?.afterSeq == 0)
        #expect(try message(SubscribeResponse.self, fromJSON: lines.lines[1]).action?.action == .created)
        #expect(lines.standardError.contains("DEADLINE_EXCEEDED"))

        let enveloped = try probe.run(
            "--as", "alice", "--timeout", "500ms", "call", moderation("Subscribe"), "-d", #"{"afterSeq":"0"}"#,
            "--emit-envelope")
        #expect(enveloped.exitCode == 64 + 4, "\(enveloped)")
        let envelope = try JSON(parsing: enveloped.standardOutput)
        #expect(envelope.keys == ["method", "status", "messages", "timing"])
        #expect(envelope["status"]["codeName"].string == "DEADLINE_EXCEEDED")
        #expect(envelope["messages"].array.count == 2)
        #expect(envelope["messages"][0]["started"].exists)
        #expect(envelope["messages"][1]["action"]["action"].string == "ACTION_TYPE_CREATED")
        #expect(try #require(envelope["timing"]["callMs"].double) >= 450)
    }

    @Test(
        "malformed JSON, unknown fields and wrong types are refused before any call, naming the place (exit 1)",
        arguments: [
            (#"{"uid":"#, "invalid JSON at line 1 column 8"),
            (#"{"uid":"alice",}"#, "invalid JSON at line 1 column 16"),
            (#"{"uidd":"alice"}"#, #"unknown field "uidd" in moderation.v1.CreateUserRequest (did you mean "uid"?)"#),
            (#"{"uid":5}"#, #"field "uid" of moderation.v1.CreateUserRequest: expected a string, got a number 5"#),
            (
                #"{"metadata":{"k":1}}"#,
                #"field "metadata["k"]" of moderation.v1.CreateUserRequest: expected a string, got a number 1"#
            ),
            (#"[]"#, "expected an object for moderation.v1.CreateUserRequest, got an array"),
        ])
    func badRequests(json: String, expected: String) throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let outcome = try ProbeRunner(server).run("call", moderation("CreateUser"), "-d", json)
        #expect(outcome.exitCode == 1, "\(outcome)")
        #expect(outcome.standardOutput.isEmpty)
        #expect(outcome.standardError.contains("invalid request for moderation.v1.Moderation.CreateUser"), "\(outcome)")
        #expect(outcome.standardError.contains(expected), "\(outcome)")
        let check = try ProbeRunner(server).run("call", moderation("GetUser"), "-d", #"{"uid":"alice"}"#)
        #expect(check.exitCode == 64 + 5, "nothing was created: \(check)")
    }

    @Test("a wrong type in a nested message and in an enum names the field path")
    func nestedTypeErrors() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        let nested = try probe.run(
            "call", moderation("AddMembers"), "-d", #"{"guid":"g","members":[{"uid":"a","scope":true}]}"#)
        #expect(nested.exitCode == 1)
        #expect(
            nested.standardError.contains(#"field "members[0].scope" of moderation.v1.AddMembersRequest"#), "\(nested)")
        #expect(nested.standardError.contains("moderation.v1.Scope value, got true"), "\(nested)")
        let badEnum = try probe.run(
            "call", moderation("CreateGroup"), "-d", #"{"guid":"g","type":"GROUP_TYPE_SECRET"}"#)
        #expect(badEnum.exitCode == 1)
        #expect(
            badEnum.standardError.contains(
                #"field "type" of moderation.v1.CreateGroupRequest: "GROUP_TYPE_SECRET" is not a value of enum moderation.v1.GroupType; "#
                    + "its values: GROUP_TYPE_UNSPECIFIED, GROUP_TYPE_PUBLIC, GROUP_TYPE_PASSWORD, GROUP_TYPE_PRIVATE"
            ), "the valid values are listed: \(badEnum)")
        let shortName = try probe.run("call", moderation("CreateGroup"), "-d", #"{"guid":"g","type":"PUBLIC"}"#)
        #expect(shortName.standardError.contains(#"(did you mean "GROUP_TYPE_PUBLIC"?)"#), "\(shortName)")
    }

    @Test("an unknown method is refused with the closest one (exit 1)")
    func unknownMethod() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        let typo = try probe.run("call", moderation("KickMembr"))
        #expect(typo.exitCode == 1)
        #expect(typo.standardError.contains(#"no method named "moderation.v1.Moderation/KickMembr""#), "\(typo)")
        #expect(typo.standardError.contains(#"did you mean "moderation.v1.Moderation/KickMember"?"#), "\(typo)")
        let bare = try probe.run("call", "BanMember")
        #expect(bare.exitCode == 1)
        #expect(bare.standardError.contains(#"did you mean "moderation.v1.Moderation/BanMember"?"#), "\(bare)")
    }

    @Test("an unreachable server exits 78 (UNAVAILABLE); with --emit-envelope the envelope says so")
    func unreachable() throws {
        let port = try UnusedPort.find()
        let probe = ProbeRunner(address: "127.0.0.1:\(port)", apiKey: "whatever-key")
        let text = try probe.run("call", moderation("GetUser"), "-d", #"{"uid":"a"}"#)
        #expect(text.exitCode == 64 + 14, "\(text)")
        #expect(text.standardError.contains("Code: UNAVAILABLE (14)"))
        #expect(text.standardError.contains("cannot connect to 127.0.0.1:\(port)"))
        let enveloped = try probe.run("call", moderation("GetUser"), "--emit-envelope")
        #expect(enveloped.exitCode == 64 + 14)
        let envelope = try JSON(parsing: enveloped.standardOutput)
        #expect(envelope["method"].string == "/moderation.v1.Moderation/GetUser", "the method as typed, never resolved")
        #expect(envelope["status"]["code"].int == 14)
        #expect(envelope["status"]["errorCode"].string == "ERR_UNAVAILABLE")
        #expect(envelope["timing"]["connectMs"].double != nil)
        #expect(envelope["timing"]["schemaMs"].isNull)
        #expect(envelope["timing"]["callMs"].isNull)
    }

    @Test("a wrong or missing API key exits 80 (UNAUTHENTICATED); --api-key overrides MODERATION_CLIENT_API_KEY")
    func apiKeys() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let wrong = try ProbeRunner(address: server.address, apiKey: "not-the-key").run("call", moderation("GetUser"))
        #expect(wrong.exitCode == 64 + 16, "\(wrong)")
        #expect(wrong.standardError.contains("Error code: ERR_UNAUTHENTICATED"), "\(wrong)")
        let none = try ProbeRunner(address: server.address, apiKey: nil).run(
            "call", moderation("GetUser"), "--emit-envelope")
        #expect(none.exitCode == 64 + 16, "\(none)")
        #expect(try JSON(parsing: none.standardOutput)["status"]["errorCode"].string == "ERR_UNAUTHENTICATED")
        let flag = try ProbeRunner(address: server.address, apiKey: "not-the-key")
            .run("--api-key", ModerationServerProcess.apiKey, "call", moderation("GetUser"), "-d", #"{"uid":"nobody"}"#)
        #expect(flag.exitCode == 64 + 5, "the flag's key got through to NOT_FOUND: \(flag)")
        let qualified = try ProbeRunner(
            address: server.address, apiKey: "\(ModerationServerProcess.appID):\(ModerationServerProcess.apiKey)"
        )
        .run("call", moderation("GetUser"), "-d", #"{"uid":"nobody"}"#)
        #expect(qualified.exitCode == 64 + 5, "APP_ID:KEY is accepted: \(qualified)")
        // The older names still give the key; the current one wins over them.
        let notFound: Int32 = 64 + 5
        for (variables, expected) in [
            (["RPC_PROBE_API_KEY": ModerationServerProcess.apiKey], notFound),
            (["MRPC_API_KEY": ModerationServerProcess.apiKey], notFound),
            (
                ["MODERATION_CLIENT_API_KEY": "not-the-key", "RPC_PROBE_API_KEY": ModerationServerProcess.apiKey],
                64 + 16
            ),
        ] {
            var runner = ProbeRunner(address: server.address, apiKey: nil)
            runner.environment = variables
            let outcome = try runner.run("call", moderation("GetUser"), "-d", #"{"uid":"nobody"}"#)
            #expect(outcome.exitCode == expected, "\(variables): \(outcome)")
        }
    }

    @Test("--compress gives the same response (inflated); -v reports the connection, sizes and time on standard error")
    func compressedAndVerbose() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let payload = String(repeating: "QUJD", count: 2_000) // 6000 bytes of "ABC…", compressible
        let outcome = try ProbeRunner(server).run(
            "-v", "call", "mrpc.diagnostics.v1.Diagnostics/Echo", "--compress", "-d", #"{"payload":"\#(payload)"}"#)
        #expect(outcome.exitCode == 0, "\(outcome)")
        #expect(try JSON(parsing: outcome.standardOutput)["payload"].string == payload)
        #expect(outcome.standardError.contains("connected to \(server.address): moderation-server"), "\(outcome)")
        #expect(outcome.standardError.contains("app \(ModerationServerProcess.appID)"))
        #expect(
            outcome.standardError.contains(
                "calling /mrpc.diagnostics.v1.Diagnostics/Echo: request 6003 bytes, on behalf of the app"))
        #expect(outcome.standardError.contains("response: 6003 bytes"))
        #expect(outcome.standardError.contains("call took "))
    }

    /// An Echo request whose payload is `count` zero bytes (a multiple of 3), as rpc-probe's JSON.
    static func echoRequest(payloadBytes count: Int) -> String {
        #"{"payload":"\#(String(repeating: "AAAA", count: count / 3))"}"#
    }

    @Test(
        "a request over the server's message limit fails RESOURCE_EXHAUSTED / ERR_MESSAGE_TOO_LARGE (exit 72), quoting the limit the server states, on both listeners and in bench"
    )
    func requestOverTheServersLimit() throws {
        let server = try ModerationServerProcess(arguments: ["--max-message-bytes", "65536"])
        defer { _ = try? server.stop() }
        let echo = "mrpc.diagnostics.v1.Diagnostics/Echo"
        // EchoRequest{payload: n} is 1 (tag) + 3 (length) + n bytes: 65532 make exactly 65536.
        let atLimit = try server.dataDirectory.write(Array(Self.echoRequest(payloadBytes: 65_532).utf8), to: "at.json")
        let justOver = try server.dataDirectory.write(
            Array(Self.echoRequest(payloadBytes: 65_535).utf8), to: "over.json")
        // Past the framed listener's frame limit (the body's limit + the header's + 1028 bytes):
        // sent, it ended the connection with GOAWAY, which read as UNAVAILABLE "may be retried".
        let farOver = try server.dataDirectory.write(Array(Self.echoRequest(payloadBytes: 99_999).utf8), to: "far.json")
        for probe in [ProbeRunner(server), try ProbeRunner.grpc(server)] {
            let fits = try probe.run("call", echo, "-d", "@" + atLimit)
            #expect(fits.exitCode == 0, "\(probe.leading): \(fits)")
            for file in [justOver, farOver] {
                let refused = try probe.run("call", echo, "-d", "@" + file)
                #expect(refused.exitCode == 64 + 8, "\(probe.leading) \(file): \(refused)")
                #expect(refused.standardError.contains("Code: RESOURCE_EXHAUSTED (8)"), "\(refused)")
                #expect(refused.standardError.contains("Error code: ERR_MESSAGE_TOO_LARGE"), "\(refused)")
                #expect(refused.standardError.contains("limit of 65536 bytes"), "\(probe.leading): \(refused)")
                #expect(!refused.standardError.contains("retried"), "\(refused)")
            }
        }
        let framed = try ProbeRunner(server).run("call", echo, "-d", "@" + farOver)
        #expect(
            framed.standardError.contains(
                "the request message of 100003 bytes exceeds the server's limit of 65536 bytes "
                    + "(max_message_bytes in its HELLO_ACK); it was not sent"), "\(framed)")
        let bench = try ProbeRunner(server).run("bench", echo, "-d", "@" + justOver, "--total", "10")
        #expect(bench.exitCode == 64 + 8, "\(bench)")
        #expect(bench.standardOutput.isEmpty, "no report: no load ran")
        #expect(bench.standardError.contains("limit of 65536 bytes"), "\(bench)")
        #expect(try ProbeRunner(server).run("health").exitCode == 0, "the server serves on")
    }

    @Test(
        "at the default limit the probe quotes 4194304 bytes, the max_message_bytes of HELLO_ACK, not the frame limit")
    func defaultLimitQuoted() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let file = try server.dataDirectory.write(
            Array(Self.echoRequest(payloadBytes: 4_299_999).utf8), to: "large.json")
        let verbose = try ProbeRunner(server).run(
            "-v", "call", "mrpc.diagnostics.v1.Diagnostics/Echo", "-d", "@" + file)
        #expect(verbose.exitCode == 64 + 8, "\(verbose)")
        #expect(verbose.standardError.contains("max message 4194304 bytes"), "-v shows the HELLO_ACK: \(verbose)")
        #expect(verbose.standardError.contains("exceeds the server's limit of 4194304 bytes"), "\(verbose)")
        #expect(!verbose.standardError.contains("4203524"), "\(verbose)")
        let grpc = try ProbeRunner.grpc(server).run("call", "mrpc.diagnostics.v1.Diagnostics/Echo", "-d", "@" + file)
        #expect(grpc.exitCode == 64 + 8, "\(grpc)")
        #expect(grpc.standardError.contains("exceeds the limit of 4194304 bytes"), "\(grpc)")
    }
}
