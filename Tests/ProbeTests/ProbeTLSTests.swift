import ModerationMessages
import TestSupport
import Testing

/// rpc-probe over TLS against the real server with `--tls-cert`: every verb that connects works
/// the same (call, the event stream of watch, health, bench), and every refusal says why.
@Suite("rpc-probe over TLS")
struct ProbeTLSTests {
    static let echo = "mrpc.diagnostics.v1.Diagnostics/Echo"
    let certificates: TestCertificates

    init() throws {
        certificates = try TestCertificates()
    }

    /// The server presenting the main CA's certificate, asking for client certificates when
    /// `mutual`.
    private func server(mutual: Bool = false) throws -> ModerationServerProcess {
        try ModerationServerProcess(
            arguments: ["--tls-cert", certificates.main.serverCertificate, "--tls-key", certificates.main.serverKey]
                + (mutual ? ["--tls-client-ca", certificates.main.certificate] : []))
    }

    @Test("--cacert: call, a watch that prints the events of calls, health and bench, all over TLS; -v names TLS 1.3")
    func verbs() throws {
        let server = try server()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        let tls = ["--cacert", certificates.main.certificate]
        let echo = try probe.run(tls + ["-v", "call", Self.echo, "-d", #"{"payload":"AAEC"}"#])
        #expect(echo.exitCode == 0, "\(echo)")
        #expect(echo.standardOutput.contains(#""payload": "AAEC""#), "\(echo)")
        #expect(echo.standardError.contains("TLSv1.3"), "\(echo)")
        #expect(echo.standardError.contains("mrpc/1"), "\(echo)")

        // From seq 0: whether the watch subscribes before or after the calls, it prints both.
        let watch = try probe.start(tls + ["watch", "--app", "--after-seq", "0", "--count", "2"])
        for uid in ["alice", "bob"] {
            let outcome = try probe.run(tls + ["call", moderation("CreateUser"), "-d", #"{"uid":"\#(uid)"}"#])
            #expect(outcome.isCleanSuccess, "\(outcome)")
        }
        let group = try probe.run(
            tls + [
                "--as", "alice", "call", moderation("CreateGroup"), "-d",
                #"{"guid":"g1","name":"G","type":"GROUP_TYPE_PUBLIC"}"#,
            ])
        #expect(group.isCleanSuccess, "\(group)")
        let joined = try probe.run(tls + ["--as", "bob", "call", moderation("JoinGroup"), "-d", #"{"guid":"g1"}"#])
        #expect(joined.isCleanSuccess, "\(joined)")
        let end = try watch.finish(timeoutMs: 20_000)
        #expect(end.exitCode == 0, "\(end)")
        let kinds = try end.lines.map { try message(SubscribeResponse.self, fromJSON: $0).action?.action }
        #expect(kinds == [.created, .joined], "\(end)")

        let health = try probe.run(tls + ["health"])
        #expect(health.isCleanSuccess, "\(health)")
        #expect(health.standardOutput.contains("SERVING"))

        let bench = try probe.run(tls + ["bench", Self.echo, "--total", "300", "--conns", "2", "--depth", "4"])
        #expect(bench.isCleanSuccess, "\(bench)")
        #expect(bench.standardOutput.contains("  [OK]   300 responses"), "\(bench)")
    }

    @Test("refusals say why: plaintext to TLS, an untrusted CA, another name; --tls-insecure-skip-verify connects")
    func refusals() throws {
        let server = try server()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        let plaintext = try probe.run("health")
        #expect(plaintext.exitCode == 64 + 3, "\(plaintext)")
        #expect(plaintext.standardError.contains("this listener speaks TLS only"), "\(plaintext)")

        let untrusted = try probe.run("--cacert", certificates.other.certificate, "health")
        #expect(untrusted.exitCode == 64 + 14, "\(untrusted)")
        #expect(untrusted.standardError.contains("certificate verify failed"), "\(untrusted)")

        let name = try probe.run(
            "--cacert", certificates.main.certificate, "--servername", "elsewhere.example", "health")
        #expect(name.exitCode == 64 + 14, "\(name)")
        #expect(name.standardError.contains("hostname mismatch"), "\(name)")

        // The system's trust store knows nothing of the test CA.
        let system = try probe.run("--tls", "health")
        #expect(system.exitCode == 64 + 14, "\(system)")

        let insecure = try probe.run("--tls-insecure-skip-verify", "health")
        #expect(insecure.isCleanSuccess, "\(insecure)")
    }

    @Test(
        "mutual TLS: --cert and --key are served; without a certificate the refusal names it; --cert alone is a usage error"
    )
    func mutualTLS() throws {
        let server = try server(mutual: true)
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        let trust = ["--cacert", certificates.main.certificate]
        let withCertificate = try probe.run(
            trust + ["--cert", certificates.main.clientCertificate, "--key", certificates.main.clientKey, "health"])
        #expect(withCertificate.isCleanSuccess, "\(withCertificate)")

        let without = try probe.run(trust + ["health"])
        #expect(without.exitCode == 64 + 14, "\(without)")
        #expect(without.standardError.contains("certificate required"), "\(without)")

        let half = try probe.run(trust + ["--cert", certificates.main.clientCertificate, "health"])
        #expect(half.exitCode == 2, "\(half)")
        #expect(half.standardError.contains("--cert needs --key"), "\(half)")
    }

    @Test("a TLS flag against a plaintext server: the handshake fails with a hint that the server may not speak TLS")
    func tlsToPlaintext() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let outcome = try ProbeRunner(server).run("--cacert", certificates.main.certificate, "health")
        #expect(outcome.exitCode == 64 + 14, "\(outcome)")
        #expect(outcome.standardError.contains("does the server speak TLS on this port?"), "\(outcome)")
    }
}
