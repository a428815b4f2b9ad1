internal import Glibc
import RPCCore
import RPCMessages
import RPCPosix
import TLSSupport
import TestSupport
import Testing

@testable import ServerApp

/// `--tls-cert`, `--tls-key` and `--tls-client-ca`: read from flags, variables and the config file
/// like every setting, checked as a pair, loaded at start (a file that does not load stops the
/// start and names the setting), and reloaded by SIGHUP in the running process.
@Suite("TLS settings: parsing, startup, SIGHUP reload")
struct TLSSettingsTests {
    private func settings(_ arguments: [String], _ environment: [String: String] = [:]) throws -> ServerSettings {
        guard case .run(let settings) = try ServerSettingsParser.parse(arguments: arguments, environment: environment)
        else {
            throw ConfigurationError("not a run command")
        }
        return settings
    }

    private func error(_ arguments: [String]) -> String? {
        do {
            _ = try ServerSettingsParser.parse(arguments: arguments, environment: [:])
            return nil
        } catch {
            return error.message
        }
    }

    @Test("no TLS flag: plaintext, as before")
    func plaintextByDefault() throws {
        #expect(try settings([]).tls == nil)
    }

    @Test("the three files from flags, variables and the config file")
    func sources() throws {
        let expected = TLSSettings(certificateFile: "/c.pem", keyFile: "/k.pem", clientCAFile: "/ca.pem")
        #expect(
            try settings(["--tls-cert", "/c.pem", "--tls-key", "/k.pem", "--tls-client-ca", "/ca.pem"]).tls == expected)
        #expect(
            try settings(
                [],
                [
                    "MODERATION_TLS_CERT": "/c.pem", "MODERATION_TLS_KEY": "/k.pem",
                    "MODERATION_TLS_CLIENT_CA": "/ca.pem",
                ]
            ).tls == expected)
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let file = try directory.write(
            Array("tls-cert = /c.pem\ntls-key = \"/k.pem\"\ntls-client-ca = /ca.pem\n".utf8), to: "moderation.conf")
        #expect(try settings(["--config", file]).tls == expected)
        // A flag wins over the file, setting by setting.
        #expect(try settings(["--config", file, "--tls-key", "/other.pem"]).tls?.keyFile == "/other.pem")
        #expect(try settings(["--config", file, "--tls-key", "/other.pem"]).tls?.certificateFile == "/c.pem")
    }

    @Test(
        "a certificate without its key, a key without its certificate, a client CA or a plaintext listener alone: refused, naming what is missing",
        arguments: [
            (["--tls-cert", "/c.pem"], "--tls-cert needs --tls-key"),
            (["--tls-key", "/k.pem"], "--tls-key needs --tls-cert"),
            (["--tls-client-ca", "/ca.pem"], "--tls-client-ca needs --tls-cert and --tls-key"),
            (["--plaintext-listen", "127.0.0.1:7602"], "--plaintext-listen is for a server with --tls-cert"),
        ])
    func incomplete(_ arguments: [String], _ message: String) {
        #expect(error(arguments)?.hasPrefix(message) == true, "\(error(arguments) ?? "accepted")")
    }

    @Test("a certificate that does not load, or a key of another certificate: the start fails, naming the setting")
    func startupFailure() throws {
        let certificates = try TestCertificates()
        let directory = TemporaryDirectory(prefix: "startup")
        defer { directory.remove() }
        var settings = ServerStartupTests.settings(directory.path)
        for (certificate, key, message) in [
            (
                directory.path + "/missing.pem", certificates.main.serverKey,
                "cannot load the certificate chain of --tls-cert"
            ),
            (certificates.main.serverCertificate, certificates.other.serverKey, "does not belong to the certificate"),
        ] {
            settings.tls = TLSSettings(certificateFile: certificate, keyFile: key)
            do throws(ServerStartupError) {
                let server = try ModerationServer(settings: settings, authenticator: TestKeys(), logger: .disabled)
                server.shutdown(gracePeriodMs: 0)
                Issue.record("the server started with \(certificate) and \(key)")
            } catch {
                #expect(error.message.hasPrefix("cannot set up TLS: "))
                #expect(error.message.contains(message), "\(error.message)")
                #expect(error.cause is TLSError)
            }
        }
    }

    @Test("/metrics counts failed TLS handshakes (logged or not) apart from wrong API keys")
    func metrics() {
        let metrics = ServerMetrics(methods: [], accessLog: nil, gauges: { [] })
        metrics.transportEvent(.transportHandshakeFailed(logged: true))
        for _ in 0..<2 { metrics.transportEvent(.transportHandshakeFailed(logged: false)) }
        let lines = Set(metrics.render().split(separator: "\n").map(String.init))
        #expect(lines.contains("mrpc_tls_handshake_failures_total 3"))
        #expect(lines.contains("mrpc_auth_failures_total 0"))
        #expect(lines.contains("mrpc_connections_cut_total{reason=\"frame_timeout\"} 0"))
    }

    @Test(
        "SIGHUP: new connections get the new certificate, an open connection and its stream go on; a bad file keeps the old"
    )
    func reloadOnSIGHUP() throws {
        let certificates = try TestCertificates()
        let certificate = try certificates.copy(certificates.main.serverCertificate, to: "live.pem")
        let key = try certificates.copy(certificates.main.serverKey, to: "live.key")
        let server = try ModerationServerProcess(arguments: ["--tls-cert", certificate, "--tls-key", key])
        defer { _ = try? server.stop() }
        func options(trusting authority: TestCertificates.Authority) -> ClientOptions {
            var options = ClientOptions(port: server.port, apiKey: ModerationServerProcess.apiKey)
            options.tls = certificates.clientConfiguration(trusting: authority)
            return options
        }
        let old = try ClientConnection.connect(options(trusting: certificates.main))
        defer { old.close() }
        let follow = Collector<ClientConnection.StreamMessage>()
        let ended = Collector<RPCError?>()
        // Subscribe to the whole app: the stream stays open across the reload.
        old.stream(
            path: "/moderation.v1.Moderation/Subscribe", body: [0x18, 0x01], // whole_app = true
            onMessage: { follow.append($0) }, onEnd: { ended.append($0) })

        try certificates.copy(certificates.other.serverCertificate, to: "live.pem")
        try certificates.copy(certificates.other.serverKey, to: "live.key")
        server.send(signal: SIGHUP)
        #expect(waitUntil(timeoutMs: 10_000) { server.log.contains("TLS certificate reloaded") })
        try ClientConnection.connect(options(trusting: certificates.other)).close()
        #expect(throws: RPCError.self) { try ClientConnection.connect(options(trusting: certificates.main)).close() }
        let reply = try old.unary(
            DiagnosticsMethods.echo, EchoRequest(payload: [4, 2]), options: CallOptions(timeoutMs: 5_000))
        #expect(reply.payload == [4, 2])
        #expect(ended.items.isEmpty, "the open stream ended: \(ended.items)")

        _ = try certificates.directory.write(Array("not a certificate".utf8), to: "live.pem")
        server.send(signal: SIGHUP)
        #expect(waitUntil(timeoutMs: 10_000) { server.log.contains("TLS certificate not reloaded") })
        try ClientConnection.connect(options(trusting: certificates.other)).close()
    }
}
