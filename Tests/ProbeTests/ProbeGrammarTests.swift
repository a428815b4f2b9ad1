import ModerationMessages
import ProtoBridge
import RPCMessages
import TestSupport
import Testing

/// grpcurl's command-line habits, as docs/RPC-PROBE.md ("grpcurl habits") lists them: the forms
/// that work as typed, table by table against a real server, and the grpcurl flags rpc-probe
/// cannot honour, each refused with what to type instead.
@Suite("rpc-probe: grpcurl habits")
struct ProbeGrammarTests {
    /// One command line and what it must print.
    struct Form: Sendable, CustomTestStringConvertible {
        let arguments: [String]
        /// The whole of standard output, or a part of it when `containing`.
        let output: String
        var containing = false
        var standardInput: String?
        var testDescription: String { arguments.joined(separator: " ") }
    }

    /// Stands for the server's address in a `Form`.
    static let host = "HOST"

    /// `GetUser` of bob (created by `forms`), as each form must print it in JSON.
    static let bob = #"""
        {
          "user": {
            "uid": "bob",
            "name": "Bob"
        """#

    @Test(
        "grpcurl's forms call the method: flags before or after, no verb, -d @, single-dash long flags",
        arguments: [
            Form(arguments: ["-d", #"{"uid":"bob"}"#, host, "moderation.v1.Moderation/GetUser"], output: bob),
            Form(arguments: [host, "moderation.v1.Moderation/GetUser", "-d", #"{"uid":"bob"}"#], output: bob),
            Form(arguments: ["-d", #"{"uid":"bob"}"#, host, "moderation.v1.Moderation.GetUser"], output: bob),
            Form(arguments: ["-d", #"{"uid":"bob"}"#, host, "call", "moderation.v1.Moderation/GetUser"], output: bob),
            Form(
                arguments: [host, "-d", "@", "moderation.v1.Moderation/GetUser"], output: bob,
                standardInput: #"{"uid":"bob"}"#),
            Form(
                arguments: ["-plaintext", "-d", #"{"uid":"bob"}"#, host, "moderation.v1.Moderation/GetUser"],
                output: bob),
            Form(
                arguments: [
                    "-plaintext", "-max-time", "10", "-connect-timeout", "3", "-max-msg-sz", "1048576", "-d",
                    #"{"uid":"bob"}"#, host, "moderation.v1.Moderation/GetUser",
                ], output: bob),
            Form(
                arguments: ["-max-time=10", "-d={\"uid\":\"bob\"}", host, "moderation.v1.Moderation/GetUser"],
                output: bob),
            Form(
                arguments: ["-emit-defaults", "-d", #"{"uid":"bob"}"#, host, "moderation.v1.Moderation/GetUser"],
                output: #""avatar": """#, containing: true),
            Form(
                arguments: ["-format", "text", "-d", #"uid: "bob""#, host, "moderation.v1.Moderation/GetUser"],
                output: "user {\n  uid: \"bob\"\n  name: \"Bob\"\n", containing: true),
            Form(
                arguments: ["-format=json", "-d", #"{"uid":"bob"}"#, host, "moderation.v1.Moderation/GetUser"],
                output: bob),
            Form(
                arguments: [host, "list", "moderation.v1.Moderation"], output: "moderation.v1.Moderation.KickMember\n",
                containing: true),
            Form(
                arguments: [host, "describe", "moderation.v1.Moderation.KickMember"],
                output: "moderation.v1.Moderation.KickMember is a method:\n", containing: true),
            Form(arguments: ["-v", host, "list"], output: "moderation.v1.Moderation\n", containing: true),
        ])
    func forms(_ form: Form) throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(address: nil, apiKey: ModerationServerProcess.apiKey)
        let created = try probe.run(
            server.address, "moderation.v1.Moderation/CreateUser", "-d", #"{"uid":"bob","name":"Bob"}"#)
        #expect(created.exitCode == 0, "\(created)")
        let arguments = form.arguments.map { $0 == Self.host ? server.address : $0 }
        let outcome = try probe.run(arguments, standardInput: form.standardInput.map { Array($0.utf8) })
        #expect(outcome.exitCode == 0, "\(outcome)")
        if form.containing || form.output == Self.bob {
            #expect(outcome.standardOutput.contains(form.output), "\(outcome)")
        } else {
            #expect(outcome.standardOutput == form.output, "\(outcome)")
        }
    }

    @Test("-H takes grpcurl's 'key: value' as well as key=value; 'authorization: Bearer KEY' is the API key")
    func headers() throws {
        let server = try HeaderEchoServer()
        defer { server.stop() }
        let directory = TemporaryDirectory(prefix: "probe-habits")
        defer { directory.remove() }
        let protoset = try directory.write(
            RPCSchema.fileDescriptorSet + ModerationSchema.fileDescriptorSet, to: "served.pb")
        let echo = "mrpc.diagnostics.v1.Diagnostics/Echo"
        let withoutKey = ProbeRunner(address: nil, apiKey: nil)
        let outcome = try withoutKey.run(
            "-protoset", protoset, "-H", "x-trace: a=b", "-H", "tenant=blue: green", "-H", "spaced:   kept ",
            "-H", "authorization: Bearer \(Frames.apiKey)", server.address, echo)
        #expect(outcome.exitCode == 0, "the key came from -H authorization: \(outcome)")
        let echoed = try message(EchoResponse.self, fromJSON: outcome.standardOutput)
        let header = try CallHeader(serializedBytes: echoed.payload)
        #expect(header.metadata == ["x-trace": "a=b", "tenant": "blue: green", "spaced": "kept "])

        let badAuthorization = try withoutKey.run("-H", "authorization: Basic abc", server.address, "health")
        #expect(badAuthorization.exitCode == 2, "\(badAuthorization)")
        #expect(
            badAuthorization.standardError.contains("authorization takes 'Bearer KEY' (the API key), got 'Basic abc'"),
            "\(badAuthorization)")
    }

    @Test("-max-time bounds the whole command: a watch ends at it (68), and so does a server that never answers")
    func maxTime() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        #expect(try probe.run("call", moderation("CreateUser"), "-d", #"{"uid":"alice"}"#).exitCode == 0)
        let started = Clock.nowMs
        let watch = try probe.run("-max-time", "0.5", "--as", "alice", "watch")
        #expect(watch.exitCode == 64 + 4, "DEADLINE_EXCEEDED: \(watch)")
        #expect(Clock.nowMs - started < 5_000)

        let silent = try RawListener() // accepts at the kernel, never answers HELLO
        let quiet = try ProbeRunner(address: "127.0.0.1:\(silent.port)", apiKey: "any-key")
            .run(["-max-time", "300ms", "health"], timeoutMs: 10_000)
        #expect(quiet.exitCode == 64 + 4, "\(quiet)")
        #expect(quiet.standardError.contains("--max-time 0.300 s passed while connecting"), "\(quiet)")

        let bench = try probe.run("-max-time", "2", "bench", moderation("GetUser"), "--total", "1")
        #expect(bench.exitCode == 2, "\(bench)")
        #expect(bench.standardError.contains("bench: --max-time bounds one command's calls"), "\(bench)")
    }

    @Test("-proto with -import-path reads .proto sources through protoc: list, describe and call need no reflection")
    func protoSources() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let root = ServerProcess.packageRoot + "/proto"
        let sources = ["-import-path", root, "-proto", "moderation/v1/moderation.proto"]
        let offline = ProbeRunner(address: nil, apiKey: ModerationServerProcess.apiKey)
        let listed = try offline.run(sources + ["list"])
        #expect(listed.isCleanSuccess, "\(listed)")
        #expect(listed.standardOutput == "moderation.v1.Moderation\n")
        let described = try offline.run(sources + ["describe", "moderation.v1.Moderation.KickMember"])
        #expect(described.isCleanSuccess, "\(described)")
        #expect(described.standardOutput.contains("// Removes a member, who may rejoin"), "comments kept: \(described)")
        let called = try offline.run(
            sources + [server.address, "moderation.v1.Moderation/CreateUser", "-d", #"{"uid":"carol"}"#])
        #expect(called.isCleanSuccess, "\(called)")
        #expect(try message(CreateUserResponse.self, fromJSON: called.standardOutput).user?.uid == "carol")

        let missing = try offline.run(["-import-path", root, "-proto", "moderation/v1/nosuch.proto", "list"])
        #expect(missing.exitCode == 1, "\(missing)")
        #expect(
            missing.standardError.contains("-proto: protoc could not read moderation/v1/nosuch.proto"), "\(missing)")
        var withoutProtoc = offline
        withoutProtoc.environment = ["PATH": "/nonexistent"]
        let noCompiler = try withoutProtoc.run(sources + ["list"])
        #expect(noCompiler.exitCode == 1, "\(noCompiler)")
        #expect(
            noCompiler.standardError.contains("-proto needs protoc, the protobuf compiler")
                && noCompiler.standardError.contains("--protoset FILE"), "\(noCompiler)")
        let pathOnly = try offline.run(["-import-path", root, "list"])
        #expect(pathOnly.exitCode == 2, "\(pathOnly)")
        #expect(pathOnly.standardError.contains("-import-path needs -proto FILE"), "\(pathOnly)")
    }

    @Test(
        "a grpcurl habit that cannot be honoured is refused (exit 2) with what to type instead",
        arguments: [
            (
                ["-insecure", "HOST", "list"],
                "unknown flag -insecure: a grpcurl flag rpc-probe does not take; use --tls-insecure-skip-verify"
            ),
            (["-vv", "HOST", "list"], "unknown flag -vv: a grpcurl flag rpc-probe does not take; use -v"),
            (["-plaintxt", "HOST", "list"], "unknown flag -plaintxt (did you mean --plaintext?)"),
            (["HOST", "bench", "--totl", "5", "x.Y/Z"], "bench: unknown flag --totl (did you mean --total?)"),
            (
                ["-rpc-header", "k: v", "HOST", "list"],
                "unknown flag -rpc-header: a grpcurl flag rpc-probe does not take; use -H 'key: value'"
            ),
            (
                ["-protoset-out", "x.pb", "HOST", "list"],
                "save the schema with the protoset verb: rpc-probe HOST:PORT protoset -o FILE"
            ),
            (["-msg-template", "HOST", "describe", "x"], "describe the request message to see its fields"),
            (["-format-error", "HOST", "x.Y/Z"], "--emit-envelope prints the status"),
            (["-plaintext", "-cacert", "ca.pem", "HOST", "list"], "-plaintext contradicts the TLS flags"),
            (["HOST", "call", "--conns", "2", "x.Y/Z"], "call: --conns is a flag of bench, not of call"),
            (["HOST", "list", "-d", "{}"], "list: -d is a flag of call and bench, not of list"),
            (
                ["HOST", "KickMember"],
                "unknown verb 'KickMember' (verbs: bench, call, describe, health, list, protoset, watch; or a method to call, pkg.Service/Method)"
            ),
            (["HOST"], "missing VERB after HOST (or a METHOD to call: rpc-probe HOST pkg.Service/Method)"),
            (["-format", "yaml", "HOST", "x.Y/Z"], "-format: expected json or text, got 'yaml'"),
            (
                ["-format", "text", "--emit-envelope", "HOST", "x.Y/Z"],
                "--emit-envelope prints JSON; drop --format text"
            ),
            (["-emit-defaults=maybe", "HOST", "x.Y/Z"], "-emit-defaults: 'maybe' is not on or off (or true or false)"),
            (["-max-time", "soon", "HOST", "x.Y/Z"], "-max-time: 'soon' is not a duration"),
        ])
    func refusedHabits(_ arguments: [String], _ message: String) throws {
        let outcome = try ProbeRunner(address: nil, apiKey: nil).run(arguments)
        #expect(outcome.exitCode == 2, "\(outcome)")
        #expect(outcome.standardOutput.isEmpty)
        #expect(outcome.standardError.contains(message), "\(outcome)")
    }

    @Test("--help and -help anywhere print the help of the verb the line names, grpcurl's call form included")
    func help() throws {
        let offline = ProbeRunner(address: nil, apiKey: nil)
        let callHelp = try offline.run("call", "--help").standardOutput
        #expect(callHelp.hasPrefix("usage: rpc-probe [flags] HOST:PORT call METHOD"))
        #expect(try offline.run("127.0.0.1:1", "x.Y/Z", "-help").standardOutput == callHelp)
        #expect(try offline.run("-h", "127.0.0.1:1", "x.Y/Z").standardOutput == callHelp)
        #expect(try offline.run("help", "call", "--help").standardOutput == callHelp)
        #expect(try offline.run("-help").standardOutput.hasPrefix("usage: rpc-probe [flags] HOST:PORT VERB"))
    }
}
