import ModerationMessages
import TestSupport
import Testing

/// `rpc-probe --grpc` against the real moderation-server in standard gRPC: the schema through
/// standard gRPC reflection, calls and their errors shown exactly as on the framed protocol,
/// grpc.health.v1, a live watch, both wires on every port, and TLS.
@Suite("rpc-probe --grpc")
struct ProbeGRPCTests {
    static let echo = "mrpc.diagnostics.v1.Diagnostics/Echo"

    @Test("list and describe come from gRPC reflection and match what the framed listener's reflection gives")
    func discovery() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let grpc = try ProbeRunner.grpc(server)
        let framed = ProbeRunner(server)

        let services = try grpc.run("list")
        #expect(services.isCleanSuccess, "\(services)")
        #expect(services.lines.contains("moderation.v1.Moderation"))
        #expect(services.lines.contains("grpc.health.v1.Health"))
        #expect(services.lines == services.lines.sorted())

        let methods = try grpc.run("list", "moderation.v1.Moderation")
        #expect(methods.isCleanSuccess, "\(methods)")
        #expect(methods.lines.contains("moderation.v1.Moderation.Subscribe (server stream)"))
        #expect(methods.lines == (try framed.run("list", "moderation.v1.Moderation")).lines)

        for symbol in [
            "moderation.v1.Moderation.KickMember", "moderation.v1.BanMemberRequest", "moderation.v1.GroupType",
        ] {
            let described = try grpc.run("describe", symbol)
            #expect(described.isCleanSuccess, "\(described)")
            #expect(described.standardOutput == (try framed.run("describe", symbol)).standardOutput, "\(symbol)")
        }
        let kick = try grpc.run("describe", "moderation.v1.Moderation/KickMember")
        #expect(kick.standardOutput.hasPrefix("moderation.v1.Moderation.KickMember is a method:\n"))
        #expect(kick.standardOutput.contains("rpc KickMember ( .moderation.v1.KickMemberRequest )"))

        let unknown = try grpc.run("describe", "moderation.v1.Moderation.KickMembr")
        #expect(unknown.exitCode == 1)
        #expect(unknown.standardError.contains("did you mean"), "\(unknown)")
    }

    @Test("call: CreateUser then GetUser as JSON; --as reaches the server; an error prints as on the framed listener")
    func calls() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let grpc = try ProbeRunner.grpc(server)

        let created = try grpc.run("call", moderation("CreateUser"), "-d", #"{"uid":"alice","name":"Alice"}"#)
        #expect(created.isCleanSuccess, "\(created)")
        #expect(created.standardOutput.hasPrefix("{\n  \"user\": {\n"), "pretty-printed like the framed call")
        let user = try message(CreateUserResponse.self, fromJSON: created.standardOutput).user
        #expect(user?.uid == "alice")

        let read = try grpc.run("call", "moderation.v1.Moderation.GetUser", "-d", #"{"uid":"alice"}"#)
        #expect(read.isCleanSuccess, "\(read)")
        let fetched = try message(GetUserResponse.self, fromJSON: read.standardOutput).user
        #expect(fetched?.name == "Alice")
        #expect(fetched?.createdAt == user?.createdAt)

        let group = try grpc.run(
            "--as", "alice", "call", moderation("CreateGroup"), "-d",
            #"{"guid":"hiking","name":"Hiking","type":"GROUP_TYPE_PUBLIC"}"#, "--request-id", "req-1",
            "--idempotency-key", "idem-1")
        #expect(group.isCleanSuccess, "\(group)")
        #expect(try message(CreateGroupResponse.self, fromJSON: group.standardOutput).group?.owner == "alice")

        let missing = try grpc.run("call", moderation("GetUser"), "-d", #"{"uid":"nosuch"}"#)
        #expect(missing.exitCode == 69, "64 + NOT_FOUND: \(missing)")
        #expect(missing.standardOutput.isEmpty)
        #expect(missing.standardError.contains("  Code: NOT_FOUND (5)\n  Error code: ERR_UID_NOT_FOUND\n"))
        let framedMissing = try ProbeRunner(server).run("call", moderation("GetUser"), "-d", #"{"uid":"nosuch"}"#)
        #expect(missing.standardError == framedMissing.standardError, "the same text over both listeners")

        let envelope = try grpc.run("call", moderation("GetUser"), "-d", #"{"uid":"nosuch"}"#, "--emit-envelope")
        #expect(envelope.exitCode == 69)
        let fields = try JSON(parsing: envelope.standardOutput)
        #expect(fields["status"]["errorCode"].string == "ERR_UID_NOT_FOUND")
        #expect(fields["status"]["codeName"].string == "NOT_FOUND")

        let badKey = try ProbeRunner(address: server.grpcAddress, apiKey: "wrong", leading: ["--grpc"])
            .run("call", moderation("GetUser"), "-d", #"{"uid":"alice"}"#)
        #expect(badKey.exitCode == 80, "64 + UNAUTHENTICATED: \(badKey)")
        let qualified = try ProbeRunner(
            address: server.grpcAddress, apiKey: "\(ModerationServerProcess.appID):\(ModerationServerProcess.apiKey)",
            leading: ["--grpc"]
        ).run("call", moderation("GetUser"), "-d", #"{"uid":"alice"}"#)
        #expect(qualified.isCleanSuccess, "APP_ID:KEY is accepted too: \(qualified)")

        let bench = try grpc.run("bench", moderation("GetUser"), "-d", #"{"uid":"alice"}"#, "--total", "1")
        #expect(bench.isCleanSuccess, "bench works over --grpc too (ProbeBenchTests): \(bench)")
        #expect(bench.standardOutput.contains("  [OK]   1 responses"), "\(bench)")
    }

    @Test("health prints SERVING from grpc.health.v1; an unknown service is NOT_FOUND")
    func health() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let grpc = try ProbeRunner.grpc(server)
        let healthy = try grpc.run("health")
        #expect(healthy.isCleanSuccess, "\(healthy)")
        #expect(healthy.standardOutput == "{\"status\":\"SERVING\"}\n")
        let named = try grpc.run("health", "moderation.v1.Moderation")
        #expect(named.standardOutput == "{\"status\":\"SERVING\"}\n", "\(named)")
        let unknown = try grpc.run("health", "no.such.Service")
        #expect(unknown.exitCode == 69, "\(unknown)")
    }

    @Test("watch receives the event of a call made meanwhile, and replays with --after-seq")
    func watch() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let grpc = try ProbeRunner.grpc(server)
        for uid in ["alice", "bob"] {
            #expect(try grpc.run("call", moderation("CreateUser"), "-d", #"{"uid":"\#(uid)"}"#).exitCode == 0)
        }
        let group = try grpc.run(
            "--as", "alice", "call", moderation("CreateGroup"), "-d",
            #"{"guid":"hiking","name":"Hiking","type":"GROUP_TYPE_PUBLIC"}"#)
        #expect(group.exitCode == 0, "\(group)")

        let replay = try grpc.run("--as", "alice", "watch", "--group", "hiking", "--after-seq", "0", "--count", "1")
        #expect(replay.isCleanSuccess, "\(replay)")
        #expect(try message(SubscribeResponse.self, fromJSON: replay.standardOutput).action?.action == .created)

        // Replay seq 1 first: once it is printed, the subscription is live.
        let live = try grpc.start(["--as", "alice", "watch", "--group", "hiking", "--after-seq", "0", "--count", "2"])
        #expect(try message(SubscribeResponse.self, fromJSON: try live.readLine(timeoutMs: 15_000)).action?.seq == 1)
        let joined = try grpc.run("--as", "bob", "call", moderation("JoinGroup"), "-d", #"{"guid":"hiking"}"#)
        #expect(joined.exitCode == 0, "\(joined)")
        let event = try message(SubscribeResponse.self, fromJSON: try live.readLine(timeoutMs: 15_000))
        #expect(event.action?.action == .joined)
        #expect(event.action?.actionBy?.uid == "bob")
        let end = try live.finish(timeoutMs: 15_000)
        #expect(end.exitCode == 0, "--count ends the watch cleanly: \(end)")
        #expect(end.standardError.isEmpty)

        let refused = try grpc.run("--as", "bob", "watch", "--group", "nosuch", "--count", "1")
        #expect(refused.exitCode >= 64, "a refused subscription exits 64 + its status: \(refused)")
        #expect(refused.standardError.hasPrefix("ERROR:\n  Code: "))

        let deadline = try grpc.run("--as", "alice", "watch", "--group", "hiking", "--timeout", "300ms")
        #expect(deadline.exitCode == 68, "64 + DEADLINE_EXCEEDED: \(deadline)")
    }

    @Test("every port speaks both: --grpc to the main port, the framed probe to the --grpc-listen port")
    func bothWiresOnEveryPort() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let grpcToMain = try ProbeRunner(
            address: server.address, apiKey: ModerationServerProcess.apiKey, leading: ["--grpc"]
        )
        .run("health")
        #expect(grpcToMain.isCleanSuccess, "\(grpcToMain)")
        #expect(grpcToMain.standardOutput.contains("SERVING"), "\(grpcToMain)")

        let framedToSecond = try ProbeRunner(address: server.grpcAddress, apiKey: ModerationServerProcess.apiKey)
            .run("health")
        #expect(framedToSecond.isCleanSuccess, "\(framedToSecond)")
        #expect(framedToSecond.standardOutput.contains("SERVING"), "\(framedToSecond)")

        let bench = try ProbeRunner.grpc(server).run("--tls", "bench", Self.echo, "--total", "10")
        #expect(bench.exitCode == 2, "bench --grpc loads plaintext only: \(bench)")
    }

    @Test("--grpc over TLS: ALPN h2, health, a call and reflection; mutual TLS; plaintext to a TLS port says why")
    func overTLS() throws {
        let certificates = try TestCertificates()
        let server = try ModerationServerProcess(
            arguments: [
                "--tls-cert", certificates.main.serverCertificate, "--tls-key", certificates.main.serverKey,
                "--tls-client-ca", certificates.main.certificate,
            ])
        defer { _ = try? server.stop() }
        let tls = [
            "--cacert", certificates.main.certificate, "--cert", certificates.main.clientCertificate, "--key",
            certificates.main.clientKey,
        ]
        let grpc = ProbeRunner(address: server.address, apiKey: ModerationServerProcess.apiKey, leading: ["--grpc"])
        let health = try grpc.run(tls + ["-v", "health"])
        #expect(health.exitCode == 0 && health.standardOutput.contains("SERVING"), "\(health)")
        #expect(health.standardError.contains("gRPC over HTTP/2 (h2, TLSv1.3"), "\(health)")
        let echo = try grpc.run(tls + ["call", Self.echo, "-d", #"{"payload":"AAEC"}"#])
        #expect(echo.isCleanSuccess && echo.standardOutput.contains(#""payload": "AAEC""#), "\(echo)")
        let list = try grpc.run(tls + ["list"])
        #expect(list.isCleanSuccess && list.standardOutput.contains("moderation.v1.Moderation"), "\(list)")

        let noCertificate = try grpc.run("--cacert", certificates.main.certificate, "health")
        #expect(noCertificate.exitCode == 64 + 14, "\(noCertificate)")
        #expect(noCertificate.standardError.contains("certificate required"), "\(noCertificate)")

        let plaintext = try grpc.run("health")
        #expect(plaintext.exitCode == 64 + 14, "\(plaintext)")
        #expect(
            plaintext.standardError.contains("TLS only") && plaintext.standardError.contains("add --tls"),
            "\(plaintext)")
    }
}
