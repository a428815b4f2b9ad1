import Glibc
import ProtoBridge
import RPCCore
import RPCMessages
import RPCPosix
import TLSSupport
import TestSupport
import Testing

/// TLS on the framed listener, over real sockets: the client library and stock clients (the
/// `openssl` command line, Python's `ssl`) that share no code with it; refusals with a reason; a
/// reload while connections are open; handshakes within the handshake timeout; a handshake flood.
@Suite("Real sockets: TLS on the listener")
struct TLSTests {
    let certificates: TestCertificates

    init() throws {
        certificates = try TestCertificates()
    }

    /// A server presenting the main CA's certificate (asking for client certificates of
    /// `clientCA`), and its clients trusting the main CA.
    func server(
        clientCA: TestCertificates.Authority? = nil, limits: ServerLimits = ServerLimits(), logger: Logger = .disabled,
        presenting client: TestCertificates.Authority? = nil, clock: ManualClock? = nil
    ) throws -> (TestServer, ReloadableTLSContext) {
        let context = try ReloadableTLSContext(certificates.serverConfiguration(certificates.main, clientCA: clientCA))
        let server = try TestServer(
            limits: limits, logger: logger, configure: { $0.tls = context },
            clientTLS: certificates.clientConfiguration(trusting: certificates.main, presenting: client), clock: clock)
        return (server, context)
    }

    @Test(
        "ClientConnection over TLS: unary calls from many threads, large messages both ways, streams with and without deflate"
    )
    func callsAndStreams() throws {
        let (server, _) = try server()
        defer { server.stop() }
        let connection = try server.connect()
        defer { connection.close() }
        #expect(connection.tlsDescription?.hasPrefix("TLSv1.3") == true)
        #expect(connection.tlsDescription?.hasSuffix(TLSContext.mrpcProtocol) == true)
        let mismatches = try Background<Int>.all(4) { thread in
            var wrong = 0
            for call in 0..<100 {
                let sent = ClientConnectionTests.payload(thread: thread, call: call)
                let reply = try? connection.unary(
                    DiagnosticsMethods.echo, EchoRequest(payload: sent), options: CallOptions(timeoutMs: 10_000))
                if reply?.payload != sent { wrong += 1 }
            }
            return wrong
        }
        #expect(mismatches == [0, 0, 0, 0])
        // Larger than the socket buffers and than many TLS records, so reads and writes stop and go on.
        let large = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let echoed = try connection.unary(
            DiagnosticsMethods.echo, EchoRequest(payload: large), options: CallOptions(timeoutMs: 20_000))
        #expect(echoed.payload == large)
        for compressed in [false, true] {
            let received = Collector<[UInt8]>()
            let end = Collector<RPCError?>()
            connection.serverStream(
                TestService.count, EchoRequest(payload: [200]), options: CallOptions(acceptDeflate: compressed),
                onMessage: { received.append($0.payload) }, onEnd: { end.append($0) })
            #expect(end.waitForCount(1))
            #expect(end.items == [nil])
            #expect(received.items == (1...200).map { TestService.streamPayload(seq: $0) })
        }
        try server.checkServing()
    }

    @Test("a plaintext client on the TLS listener gets GOAWAY ERR_PROTOCOL saying why; the server serves on")
    func plaintextClientRefused() throws {
        let (server, _) = try server()
        defer { server.stop() }
        var plaintext = server.clientOptions
        plaintext.tls = nil
        #expect {
            try ClientConnection.connect(plaintext)
        } throws: { error in
            guard let error = error as? RPCError else { return false }
            return error.errorCode == RuntimeErrorCode.protocolViolation.name
                && error.message.contains("speaks TLS only")
        }
        // Not even a TLS alert for a peer whose first bytes are not TLS: garbage is just closed.
        let raw = try server.raw()
        try raw.send(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        _ = try? raw.expectClose()
        try server.checkServing()
    }

    @Test(
        "a client that does not trust the server's CA, or expects another name, refuses it with the reason",
        arguments: ["untrusted CA", "another name"])
    func verificationFailure(case: String) throws {
        let (server, _) = try server()
        defer { server.stop() }
        var options = server.clientOptions
        if `case` == "untrusted CA" {
            options.tls = certificates.clientConfiguration(trusting: certificates.other)
        } else {
            options.tls?.serverName = "other.example"
        }
        #expect {
            try ClientConnection.connect(options)
        } throws: { error in
            guard let error = error as? RPCError, error.code == .unavailable else { return false }
            let reason = `case` == "untrusted CA" ? "unable to get local issuer certificate" : "hostname mismatch"
            return error.message.contains("certificate verify failed") && error.message.contains(reason)
        }
        // The name the certificate carries, given explicitly, is fine (and "localhost" as the host too).
        options = server.clientOptions
        options.tls?.serverName = "localhost"
        try ClientConnection.connect(options).close()
        try server.checkServing()
    }

    @Test(
        "mutual TLS: no client certificate, or one of another CA, is refused in the handshake; one of the CA is served")
    func mutualTLS() throws {
        let (logger, capture) = Logger.capturing(level: .debug)
        let (server, _) = try server(clientCA: certificates.main, logger: logger, presenting: certificates.main)
        defer { server.stop() }
        for (presented, reason) in [(nil, "certificate required"), (certificates.other, "unknown ca")] {
            var options = server.clientOptions
            options.tls = certificates.clientConfiguration(trusting: certificates.main, presenting: presented)
            #expect {
                try ClientConnection.connect(options).close()
            } throws: { error in
                guard let error = error as? RPCError, error.code == .unavailable else { return false }
                return error.message.contains("the server refused the TLS connection") && error.message.contains(reason)
            }
        }
        #expect(capture.lines.contains { $0.contains("TLS handshake failed") && $0.contains("certificate") })
        try server.checkServing()
        #expect(capture.lines.contains { $0.contains("client_certificate=\"CN=test-client-main\"") })
    }

    @Test(
        "a reload: new connections get the new certificate, open ones go on; a reload that fails keeps the current one")
    func reload() throws {
        let certificate = try certificates.copy(certificates.main.serverCertificate, to: "live.pem")
        let key = try certificates.copy(certificates.main.serverKey, to: "live.key")
        let context = try ReloadableTLSContext(
            TLSServerConfiguration(certificateChainFile: certificate, privateKeyFile: key))
        let server = try TestServer(
            configure: { $0.tls = context }, clientTLS: certificates.clientConfiguration(trusting: certificates.main))
        defer { server.stop() }
        let old = try server.connect()
        defer { old.close() }

        try certificates.copy(certificates.other.serverCertificate, to: "live.pem")
        try certificates.copy(certificates.other.serverKey, to: "live.key")
        try context.reload()
        var trustingOther = server.clientOptions
        trustingOther.tls = certificates.clientConfiguration(trusting: certificates.other)
        let new = try ClientConnection.connect(trustingOther)
        defer { new.close() }
        #expect(throws: RPCError.self) { try server.connect().close() } // the old certificate is gone
        for connection in [old, new] {
            let reply = try connection.unary(
                DiagnosticsMethods.echo, EchoRequest(payload: [7]), options: CallOptions(timeoutMs: 5_000))
            #expect(reply.payload == [7])
        }

        // A key that does not match its certificate: the reload throws, the current context stays.
        try certificates.copy(certificates.main.serverKey, to: "live.key")
        #expect(throws: TLSError.self) { try context.reload() }
        try ClientConnection.connect(trustingOther).close()
    }

    @Test("a TLS handshake that stalls counts toward the handshake timeout: the connection is closed")
    func stalledHandshake() throws {
        var limits = ServerLimits()
        limits.handshakeTimeoutMs = 10_000
        let (server, _) = try server(limits: limits, clock: ManualClock())
        defer { server.stop() }
        let silent = try server.raw()
        // Half a ClientHello record: the handshake began and goes nowhere.
        let half = try server.raw()
        try half.send([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00])
        #expect(server.waitForConnections(2))
        server.advance(ms: 9_999)
        #expect(try silent.availableFrame(waitMs: 20) == nil)
        #expect(try half.availableFrame(waitMs: 20) == nil)
        server.advance(ms: 1)
        _ = try silent.expectClose(timeoutMs: 2_000)
        _ = try half.expectClose(timeoutMs: 2_000)
        try server.checkServing()
    }

    @Test("a flood of TLS handshakes (one ClientHello replayed) does not hold up Echo on an established connection")
    func handshakeFlood() throws {
        let (logger, capture) = Logger.capturing(level: .info)
        let (server, _) = try server(logger: logger)
        defer { server.stop() }
        let connection = try server.connect()
        defer { connection.close() }
        let flood = try TLSHandshakeFlood(port: server.port, threads: 4)
        usleep(200_000)
        var slowest = 0
        let until = Clock.nowMs + 2_000
        while Clock.nowMs < until {
            let started = Clock.nowMs
            let reply = try connection.unary(
                DiagnosticsMethods.echo, EchoRequest(payload: [1, 2, 3]), options: CallOptions(timeoutMs: 5_000))
            #expect(reply.payload == [1, 2, 3])
            slowest = max(slowest, Clock.nowMs - started)
            usleep(10_000)
        }
        let handshakes = flood.stop()
        let lines = capture.lines.filter { $0.contains("TLS handshake failed") }.count
        print(
            "TLS handshake flood: \(handshakes) handshakes answered in 2 s; Echo took at most \(slowest) ms; \(lines) log lines"
        )
        #expect(handshakes > 100, "the flood was no flood")
        #expect(slowest < 500, "Echo waited \(slowest) ms during the flood")
        #expect(lines < 100, "failed handshakes are throttled like failed HELLOs")
        try server.checkServing()
    }

    @Test(
        "openssl s_client, sharing no code, completes a handshake: certificate verified, ALPN mrpc/1; ALPN h2 alone is refused"
    )
    func stockClient() throws {
        let (server, _) = try server()
        defer { server.stop() }
        func sClient(_ extra: [String]) throws -> ChildProcess.Outcome {
            try ChildProcess(
                executable: "/usr/bin/openssl",
                arguments: [
                    "s_client", "-connect", "127.0.0.1:\(server.port)", "-CAfile", certificates.main.certificate,
                    "-verify_return_error", "-verify_hostname", "localhost",
                ] + extra, standardInput: []
            ).finish(timeoutMs: 15_000)
        }
        let modern = try sClient(["-alpn", "mrpc/1"])
        #expect(modern.exitCode == 0, "\(modern)")
        #expect(modern.standardOutput.contains("Verify return code: 0 (ok)"))
        #expect(modern.standardOutput.contains("ALPN protocol: mrpc/1"))
        #expect(modern.standardOutput.contains("TLSv1.3"))
        let tls12 = try sClient(["-tls1_2"])
        #expect(tls12.exitCode == 0, "\(tls12)")
        #expect(tls12.standardOutput.contains("Protocol  : TLSv1.2"))
        #expect(tls12.standardOutput.contains("ECDHE"))
        let h2 = try sClient(["-alpn", "h2"])
        #expect(h2.exitCode != 0)
        #expect(h2.standardError.contains("no application protocol"), "\(h2)")
        try server.checkServing()
    }

    @Test("a Python client with the standard library's ssl makes calls", .enabled(if: Python.isAvailable))
    func pythonClient() throws {
        let (server, _) = try server()
        defer { server.stop() }
        let script = """
            import socket, ssl, sys
            context = ssl.create_default_context(cafile=\(pythonString(certificates.main.certificate)))
            context.set_alpn_protocols(["mrpc/1"])
            with socket.create_connection(("127.0.0.1", \(server.port)), timeout=10) as plain:
                with context.wrap_socket(plain, server_hostname="localhost") as tls:
                    assert tls.selected_alpn_protocol() == "mrpc/1", tls.selected_alpn_protocol()
                    tls.sendall(open(sys.argv[1], "rb").read())
                    out = b""
                    # HELLO_ACK, then the reply: read until two whole frames have arrived.
                    def complete(data):
                        count, offset = 0, 0
                        while len(data) - offset >= 12:
                            length = int.from_bytes(data[offset:offset + 4], "big")
                            if len(data) - offset < 12 + length:
                                break
                            offset += 12 + length
                            count += 1
                        return count
                    while complete(out) < 2:
                        chunk = tls.recv(65536)
                        if not chunk:
                            break
                        out += chunk
                    open(sys.argv[2], "wb").write(out)
            """
        let output = try Python.run(script, input: Frames.opening() + Frames.echo(streamID: 1, [9, 8, 7]))
        let frames = try FrameParser.frames(in: output)
        #expect(frames.map(\.type) == [.helloAck, .reply])
        let reply = try #require(frames.last).reply()
        #expect(reply.status.code == 0)
        #expect(try EchoResponse(serializedBytes: reply.body).payload == [9, 8, 7])
    }

    /// A Python string literal of a path (the temporary directory's: no quotes or backslashes).
    private func pythonString(_ text: String) -> String { "'" + text + "'" }
}
