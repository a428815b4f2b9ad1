import ModerationMessages
import ProtoBridge
import RPCMessages
import TestSupport
import Testing

/// `list`, `describe` and `protoset` against the real server's reflection, and `list`/`describe`
/// from a saved protoset with no server at all.
@Suite("rpc-probe list, describe, protoset")
struct ProbeDiscoveryTests {
    static let services = [
        "moderation.v1.Moderation", "mrpc.diagnostics.v1.Diagnostics", "mrpc.health.v1.Health",
        "mrpc.reflection.v1.Reflection",
    ]

    @Test("list prints every service, sorted; list SERVICE its methods in order, streaming ones marked")
    func list() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        let services = try probe.run("list")
        #expect(services.isCleanSuccess, "\(services)")
        #expect(services.lines == Self.services)

        let methods = try probe.run("list", "moderation.v1.Moderation")
        #expect(methods.isCleanSuccess, "\(methods)")
        let expected = ModerationSchema.methods.map {
            "moderation.v1.Moderation.\($0.name)" + ($0.serverStreaming ? " (server stream)" : "")
        }
        #expect(methods.lines == expected)
        #expect(methods.lines.last == "moderation.v1.Moderation.Subscribe (server stream)")

        let unknown = try probe.run("list", "moderation.v1.Nope")
        #expect(unknown.exitCode == 1)
        #expect(
            unknown.standardError.contains(
                "no service moderation.v1.Nope (known: \(Self.services.joined(separator: ", ")))"), "\(unknown)")
    }

    @Test("describe: a service, a method with its streaming flag, a message with its fields, an enum, a field")
    func describe() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        let service = try probe.run("describe", "moderation.v1.Moderation")
        #expect(service.isCleanSuccess, "\(service)")
        #expect(service.lines.first == "moderation.v1.Moderation is a service:")
        #expect(
            service.standardOutput.contains(
                "rpc KickMember ( .moderation.v1.KickMemberRequest ) returns ( .moderation.v1.KickMemberResponse );"))

        let stream = try probe.run("describe", "moderation.v1.Moderation/Subscribe")
        #expect(stream.lines.first == "moderation.v1.Moderation.Subscribe is a method:")
        #expect(stream.standardOutput.contains("returns ( stream .moderation.v1.SubscribeResponse );"), "\(stream)")
        let unary = try probe.run("describe", "/moderation.v1.Moderation/BanMember")
        #expect(
            unary.standardOutput.contains(
                "rpc BanMember ( .moderation.v1.BanMemberRequest ) returns ( .moderation.v1.BanMemberResponse );"))
        #expect(!unary.standardOutput.contains("stream"))

        let message = try probe.run("describe", "moderation.v1.BanMemberRequest")
        #expect(message.lines.first == "moderation.v1.BanMemberRequest is a message:")
        for field in [
            "string guid = 1;", "string uid = 2;", "string reason = 3;", "int64 duration_ms = 4;",
            "bool if_not_banned = 5;",
        ] {
            #expect(message.standardOutput.contains(field), "\(field) in \(message.standardOutput)")
        }
        #expect(
            message.standardOutput.contains("// Length of the ban in milliseconds; 0 means permanent."),
            "comments come along")

        let enumType = try probe.run("describe", "moderation.v1.Scope")
        #expect(enumType.lines.first == "moderation.v1.Scope is an enum:")
        #expect(enumType.standardOutput.contains("SCOPE_MODERATOR = 2;"))

        let field = try probe.run("describe", "moderation.v1.BanMemberRequest.duration_ms")
        #expect(field.lines.first == "moderation.v1.BanMemberRequest.duration_ms is a field:", "\(field)")

        let typo = try probe.run("describe", "moderation.v1.BanMemberRequst")
        #expect(typo.exitCode == 1)
        #expect(typo.standardError.contains(#"did you mean "moderation.v1.BanMemberRequest"?"#), "\(typo)")

        let cutShort = try probe.run("describe", "moderation.v1.Moderation.Kick")
        #expect(cutShort.exitCode == 1)
        #expect(
            cutShort.standardError.hasSuffix(#"(did you mean "moderation.v1.Moderation.KickMember"?)"# + "\n"),
            "the method it begins, not the service it is closest to: \(cutShort)")
        let call = try probe.run("call", "moderation.v1.Moderation/Kick")
        #expect(call.standardError.contains(#"(did you mean "moderation.v1.Moderation/KickMember"?)"#), "\(call)")
    }

    @Test("describe without a symbol describes every service")
    func describeAll() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let all = try ProbeRunner(server).run("describe")
        #expect(all.isCleanSuccess, "\(all)")
        for service in Self.services { #expect(all.standardOutput.contains("\(service) is a service:")) }
    }

    @Test(
        "protoset saves exactly the served descriptor set; with it, list and describe need no server, and call works on the server"
    )
    func protosetRoundTrip() throws {
        let server = try ModerationServerProcess()
        let directory = TemporaryDirectory(prefix: "probe-protoset")
        defer { directory.remove() }
        let probe = ProbeRunner(server)
        let saved = try probe.run("protoset")
        #expect(saved.exitCode == 0, "\(saved)")
        #expect(saved.standardOutputBytes == RPCSchema.fileDescriptorSet + ModerationSchema.fileDescriptorSet)
        let file = directory.path + "/schema.pb"
        let written = try probe.run("-v", "protoset", "-o", file)
        #expect(written.exitCode == 0, "\(written)")
        #expect(written.standardOutput.isEmpty)
        #expect(written.standardError.contains("\(saved.standardOutputBytes.count) bytes:"), "\(written)")
        #expect(written.standardError.contains("4 services"), "\(written)")

        let called = try probe.run(
            "--protoset", file, "call", moderation("CreateUser"), "-d", #"{"uid":"alice"}"#, "--emit-envelope")
        #expect(called.exitCode == 0, "\(called)")
        let timing = try JSON(parsing: called.standardOutput)["timing"]
        #expect(timing["schemaMs"].double != nil && timing["connectMs"].double != nil)
        try server.stop()

        let offline = ProbeRunner(address: nil, apiKey: nil)
        let services = try offline.run("--protoset", file, "list")
        #expect(services.isCleanSuccess, "\(services)")
        #expect(services.lines == Self.services)
        let methods = try offline.run("list", "--protoset", file, "mrpc.reflection.v1.Reflection")
        #expect(
            methods.lines == [
                "mrpc.reflection.v1.Reflection.ListServices", "mrpc.reflection.v1.Reflection.GetFileDescriptorSet",
            ])
        let described = try offline.run("--protoset=\(file)", "describe", "moderation.v1.Moderation.Subscribe")
        #expect(described.isCleanSuccess, "\(described)")
        #expect(described.standardOutput.contains("returns ( stream .moderation.v1.SubscribeResponse );"))

        let split = try offline.run(
            "--protoset", try directory.write(RPCSchema.fileDescriptorSet, to: "rpc.pb"),
            "--protoset", try directory.write(ModerationSchema.fileDescriptorSet, to: "moderation.pb"), "list")
        #expect(split.lines == Self.services, "several --protoset files are read as one set: \(split)")

        let needsServer = try offline.run("--protoset", file, "call", moderation("GetUser"))
        #expect(needsServer.exitCode == 2, "\(needsServer)")
        #expect(needsServer.standardError.contains("missing HOST:PORT"))
    }

    @Test(
        "a missing or invalid --protoset is a clear error (exit 1); list with neither a server nor --protoset is a usage error"
    )
    func badProtosets() throws {
        let directory = TemporaryDirectory(prefix: "probe-badset")
        defer { directory.remove() }
        let offline = ProbeRunner(address: nil, apiKey: nil)
        let missing = try offline.run("--protoset", directory.path + "/none.pb", "list")
        #expect(missing.exitCode == 1)
        #expect(
            missing.standardError.contains(
                "cannot read --protoset \(directory.path)/none.pb: No such file or directory"), "\(missing)")
        let garbage = try offline.run("--protoset", try directory.write([0x0A, 0xFF, 0x01], to: "garbage.pb"), "list")
        #expect(garbage.exitCode == 1)
        #expect(garbage.standardError.contains("the descriptor set from --protoset is not valid"), "\(garbage)")
        let nothing = try offline.run("list")
        #expect(nothing.exitCode == 2)
        #expect(nothing.standardError.contains("missing HOST:PORT"), "\(nothing)")
    }
}
