import Glibc
import RPCPosix
import TestSupport
import Testing

/// True when Debian's PostgreSQL server binaries (initdb) are installed.
private let postgresInstalled =
    (try? ChildProcess.run(executable: "/bin/sh", arguments: ["-c", "ls /usr/lib/postgresql/*/bin/initdb"]))?
    .exitCode == 0

/// `tools/cluster`: up starts PostgreSQL and three instances that serve one another's writes,
/// status reports them, down stops everything and removes the directory.
@Suite("tools/cluster", .enabled(if: postgresInstalled, "PostgreSQL's binaries are not installed"))
struct ClusterToolTests {

    @Test("up, a write through instance 1 read through instance 3, status, down")
    func upStatusDown() throws {
        let parent = TemporaryDirectory(prefix: "moderation-cluster-test")
        defer { parent.remove() }
        chmod(parent.path, 0o755) // the postgres OS user (when run as root) must reach DIR/pg
        let dir = parent.path + "/cluster"
        let server = try BuiltProducts.path(of: "moderation-server")
        let bin = String(server[..<server.lastIndex(of: "/")!])
        var environment = ProcessEnvironment.current()
        environment["MODERATION_PG_FSYNC"] = "off"
        let script = BuiltProducts.packageRoot + "/tools/cluster"
        func cluster(_ arguments: [String]) throws -> ChildProcess.Outcome {
            try ChildProcess.run(
                executable: script, arguments: arguments + ["--dir", dir], environment: environment,
                timeoutMs: 90_000)
        }
        // Consecutive ports below the ephemeral range, where the other tests' servers (port 0)
        // and clients get theirs; another attempt if one is taken all the same.
        var port = 0
        var up: ChildProcess.Outcome?
        for _ in 0..<3 {
            port = Int.random(in: 20_000..<32_000)
            let attempt = try cluster(["up", "--port", "\(port)", "--metrics-port", "\(port + 3)", "--bin", bin])
            up = attempt
            if attempt.exitCode == 0 || !attempt.standardError.contains("Address already in use") { break }
            _ = try? cluster(["down"])
        }
        defer { _ = try? cluster(["down"]) }
        let started = try #require(up)
        try #require(started.exitCode == 0, "\(started)")
        let keyLine = try #require(started.lines.first { $0.contains("API key (app demo): ") })
        let key = String(keyLine.split(separator: " ").last!)
        var probeEnvironment = environment
        probeEnvironment["MODERATION_CLIENT_API_KEY"] = key
        let probe = try BuiltProducts.path(of: "rpc-probe")
        let created = try ChildProcess.run(
            executable: probe,
            arguments: [
                "127.0.0.1:\(port)", "call", "moderation.v1.Moderation/CreateUser", "-d",
                #"{"uid":"alice","name":"Alice"}"#,
            ], environment: probeEnvironment)
        #expect(created.exitCode == 0, "\(created)")
        let read = try ChildProcess.run(
            executable: probe,
            arguments: [
                "127.0.0.1:\(port + 2)", "call", "moderation.v1.Moderation/GetUser", "-d", #"{"uid":"alice"}"#,
            ],
            environment: probeEnvironment)
        #expect(read.exitCode == 0 && read.standardOutput.contains("\"Alice\""), "\(read)")

        let status = try cluster(["status"])
        #expect(status.exitCode == 0, "\(status)")
        #expect(status.lines.first?.hasPrefix("postgresql: running") == true, "\(status)")
        #expect(status.lines.filter { $0.hasPrefix("instance ") && $0.hasSuffix(", serving") }.count == 3, "\(status)")

        let down = try cluster(["down"])
        #expect(down.exitCode == 0, "\(down)")
        #expect(access(dir, F_OK) != 0, "down removes the directory")
    }
}
