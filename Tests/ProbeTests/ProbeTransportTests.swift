import ModerationMessages
import ProtoBridge
import RPCCore
import RPCMessages
import TestSupport
import Testing

/// The shared flags that shape the connection and the CallHeader, checked where the server sees
/// them (an in-process server whose Echo answers with the header it received), and a server with
/// no reflection: the hint, `--protoset`, and a streaming call it refuses.
@Suite("rpc-probe: CallHeader flags, limits, timeouts, servers without reflection")
struct ProbeTransportTests {
    static let echo = "mrpc.diagnostics.v1.Diagnostics/Echo"

    /// A protoset file of the served schema, written into `directory`.
    private func protoset(in directory: TemporaryDirectory) throws -> String {
        try directory.write(RPCSchema.fileDescriptorSet + ModerationSchema.fileDescriptorSet, to: "served.pb")
    }

    /// The CallHeader the header-echo server saw, from rpc-probe's JSON response.
    private func seenHeader(_ outcome: ChildProcess.Outcome) throws -> CallHeader {
        let echoed = try message(EchoResponse.self, fromJSON: outcome.standardOutput)
        return try CallHeader(serializedBytes: echoed.payload)
    }

    @Test("-H metadata, --as, --request-id, --idempotency-key and --timeout reach the server's CallHeader")
    func headerFlags() throws {
        let server = try HeaderEchoServer()
        defer { server.stop() }
        let directory = TemporaryDirectory(prefix: "probe-header")
        defer { directory.remove() }
        let probe = ProbeRunner(address: server.address, apiKey: Frames.apiKey)
        let outcome = try probe.run(
            "--protoset", try protoset(in: directory), "-H", "trace-id=abc123", "--header", "tenant=blue=green", "-H",
            "trace-id=def456",
            "--as", "alice", "--timeout", "20s", "call", Self.echo, "--request-id", "req-7", "--idempotency-key",
            "idem-9")
        #expect(outcome.isCleanSuccess, "\(outcome)")
        let header = try seenHeader(outcome)
        #expect(header.method == "/mrpc.diagnostics.v1.Diagnostics/Echo")
        #expect(
            header.metadata == ["trace-id": "def456", "tenant": "blue=green"],
            "a repeated key keeps its last value; '=' may appear in values")
        #expect(header.onBehalfOf == "alice")
        #expect(header.requestID == "req-7")
        #expect(header.idempotencyKey == "idem-9")
        #expect(header.timeoutMs > 15_000 && header.timeoutMs <= 20_000, "timeout left: \(header.timeoutMs) ms")

        let bare = try probe.run("--protoset", try protoset(in: directory), "call", Self.echo)
        #expect(bare.exitCode == 0, "\(bare)")
        let plain = try seenHeader(bare)
        #expect(plain.metadata.isEmpty && plain.onBehalfOf.isEmpty && plain.timeoutMs == 0 && plain.requestID.isEmpty)
    }

    @Test(
        "a server without reflection: list and call say so and point to --protoset (exit 76); with --protoset they work"
    )
    func noReflection() throws {
        let server = try HeaderEchoServer()
        defer { server.stop() }
        let directory = TemporaryDirectory(prefix: "probe-noreflect")
        defer { directory.remove() }
        let probe = ProbeRunner(address: server.address, apiKey: Frames.apiKey)
        for arguments in [
            ["list"], ["describe", "mrpc.diagnostics.v1.EchoRequest"], ["call", Self.echo],
            ["protoset", "-o", directory.path + "/x.pb"],
        ] {
            let refused = try probe.run(arguments)
            #expect(refused.exitCode == 64 + 12, "\(arguments): \(refused)")
            #expect(refused.standardError.contains("the server does not support reflection"), "\(refused)")
            #expect(refused.standardError.contains("--protoset FILE"), "\(refused)")
            #expect(refused.standardError.contains("Error code: ERR_UNIMPLEMENTED"), "\(refused)")
        }
        let enveloped = try probe.run("call", Self.echo, "--emit-envelope")
        #expect(enveloped.exitCode == 64 + 12)
        #expect(
            try JSON(parsing: enveloped.standardOutput)["status"]["message"].string?.contains(
                "does not support reflection") == true)

        let file = try protoset(in: directory)
        let called = try probe.run("--protoset", file, "call", Self.echo, "-d", #"{"payload":"cHJvYmU="}"#)
        #expect(called.isCleanSuccess, "\(called)")
        #expect(try JSON(parsing: called.standardOutput)["payload"].string == "cHJvYmU=")
    }

    @Test(
        "a streaming method the server does not have is refused with one REPLY: rpc-probe ends with UNIMPLEMENTED, it does not hang"
    )
    func refusedStream() throws {
        let server = try HeaderEchoServer()
        defer { server.stop() }
        let directory = TemporaryDirectory(prefix: "probe-refused")
        defer { directory.remove() }
        let probe = ProbeRunner(address: server.address, apiKey: Frames.apiKey)
        let file = try protoset(in: directory)
        let watched = try probe.run(["--protoset", file, "--as", "alice", "watch"], timeoutMs: 10_000)
        #expect(watched.exitCode == 64 + 12, "\(watched)")
        #expect(watched.standardError.contains("ERR_UNIMPLEMENTED"), "\(watched)")
        let called = try probe.run(
            ["--protoset", file, "call", moderation("Subscribe"), "--emit-envelope"], timeoutMs: 10_000)
        #expect(called.exitCode == 64 + 12, "\(called)")
        let envelope = try JSON(parsing: called.standardOutput)
        #expect(envelope["messages"].array.isEmpty)
        #expect(envelope["status"]["codeName"].string == "UNIMPLEMENTED")
    }

    @Test(
        "--max-msg-bytes: a response over it fails RESOURCE_EXHAUSTED / ERR_MESSAGE_TOO_LARGE (exit 72); at it, it passes"
    )
    func maxMessageBytes() throws {
        let server = try HeaderEchoServer()
        defer { server.stop() }
        let directory = TemporaryDirectory(prefix: "probe-limit")
        defer { directory.remove() }
        let probe = ProbeRunner(address: server.address, apiKey: Frames.apiKey)
        let file = try protoset(in: directory)
        // EchoResponse{payload: 1021 bytes} is 1024 bytes on the wire; 1022 bytes make 1025.
        let atLimit = String(repeating: "QUFB", count: 340) + "QQ==" // base64 of 1021 × "A"
        let overLimit = String(repeating: "QUFB", count: 340) + "QUE=" // base64 of 1022 × "A"
        let fits = try probe.run(
            "--protoset", file, "--max-msg-bytes", "1024", "call", Self.echo, "-d", #"{"payload":"\#(atLimit)"}"#)
        #expect(fits.exitCode == 0, "\(fits)")
        let tooLarge = try probe.run(
            "--protoset", file, "--max-msg-bytes=1024", "call", Self.echo, "-d", #"{"payload":"\#(overLimit)"}"#)
        #expect(tooLarge.exitCode == 64 + 8, "\(tooLarge)")
        #expect(tooLarge.standardError.contains("Error code: ERR_MESSAGE_TOO_LARGE"), "\(tooLarge)")
        #expect(tooLarge.standardError.contains("1025 bytes"), "\(tooLarge)")
        let usage = try probe.run("--max-msg-bytes", "100", "call", Self.echo)
        #expect(usage.exitCode == 2, "below the 1024 minimum: \(usage)")
    }

    @Test("--connect-timeout bounds a server that accepts the connection but never answers HELLO (exit 78)")
    func connectTimeout() throws {
        let silent = try RawListener() // listens, never accepts: the kernel completes the TCP handshake
        let started = Clock.nowMs
        let outcome = try ProbeRunner(address: "127.0.0.1:\(silent.port)", apiKey: "any-key")
            .run(["--connect-timeout", "300ms", "health"], timeoutMs: 10_000)
        let took = Clock.nowMs - started
        #expect(outcome.exitCode == 64 + 14, "\(outcome)")
        #expect(outcome.standardError.contains("no HELLO_ACK within 300 ms"), "\(outcome)")
        #expect(took < 4_000, "gave up after \(took) ms, not the default 5 s")
    }

    @Test("health needs no reflection; a server without the health service gets UNIMPLEMENTED (exit 76)")
    func healthWithoutHealthService() throws {
        let server = try HeaderEchoServer()
        defer { server.stop() }
        let outcome = try ProbeRunner(address: server.address, apiKey: Frames.apiKey).run("health")
        #expect(outcome.exitCode == 64 + 12, "\(outcome)")
        #expect(outcome.standardError.contains("UNIMPLEMENTED"))
    }
}
