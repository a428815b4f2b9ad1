internal import Glibc
import ProtoBridge
import RPCCore
import RPCMessages
import RPCPosix
import TestSupport
import Testing

/// `--log-format json` as log tools read it: every line the server writes, on standard output
/// and standard error, is one JSON object, with numbers and booleans typed.
@Suite("JSON logs: every line of the server is a JSON object with typed fields")
struct JSONLogTests {
    static let key = "logs:key-of-the-log-test"

    /// Each line of `text`, parsed; a line that is not JSON fails the test, naming it.
    static func objects(_ text: String) throws -> [JSON] {
        try text.split(separator: "\n").map { line in
            let json = try JSON(parsing: String(line))
            #expect(json["time"].string?.count == 24, "\(line)")
            #expect(json["level"].string != nil && json["msg"].string != nil, "\(line)")
            return json
        }
    }

    @Test("a server's whole life: the readiness line, start, access log, refusals, shutdown")
    func wholeLife() throws {
        let directory = TemporaryDirectory(prefix: "json-log")
        defer { directory.remove() }
        let server = try ServerProcess(
            arguments: [
                "--data-dir", directory.path + "/data", "--api-key", Self.key, "--log-format", "json",
                "--durability", "normal", "--access-log-internal", "on",
            ], logPath: directory.path + "/stderr.log")
        let ready = try JSON(parsing: server.readinessLine)
        #expect(ready["msg"].string == "listening on 127.0.0.1:\(server.port)")
        #expect(ready["listen"].string == "127.0.0.1:\(server.port)")

        let connection = try ClientConnection.connect(ClientOptions(port: server.port, apiKey: Self.key))
        _ = try connection.unary(DiagnosticsMethods.echo, EchoRequest(payload: [1, 2, 3]))
        _ = try connection.unary(HealthMethods.check, HealthCheckRequest())
        let missing = ProtoMethod<EchoRequest, EchoResponse>(
            service: "nothing.v1.Here", name: "Missing", clientStreaming: false, serverStreaming: false)
        #expect(throws: RPCError.self) { try connection.unary(missing, EchoRequest()) }
        connection.close()
        // A wrong key: a refused handshake, logged as a warning.
        #expect(throws: RPCError.self) {
            try ClientConnection.connect(ClientOptions(port: server.port, apiKey: "logs:not-the-key-at-all"))
        }
        let status = try server.kill(SIGTERM)
        #expect(status == 0, "exit status \(status)")

        let lines = try Self.objects(try directory.read("stderr.log"))
        let messages = lines.compactMap { $0["msg"].string }
        #expect(messages.contains("server started"), "\(messages)")
        #expect(messages.contains("shutdown complete"), "\(messages)")
        let calls = lines.filter { $0["msg"].string == "call" }
        #expect(calls.count == 3, "echo, health (internal, asked for) and the unknown method: \(calls)")
        for call in calls {
            #expect(call["duration_ms"].double != nil, "a number: \(call)")
            #expect(call["stream"].int != nil, "a number: \(call)")
            #expect(call["status"].string != nil && call["app"].string == "logs", "\(call)")
        }
        #expect(
            calls.contains {
                $0["status"].string == "UNIMPLEMENTED" && $0["method"].string == "/nothing.v1.Here/Missing"
            })
    }

    @Test("a start that fails says why as a JSON object", arguments: [true, false])
    func startFailure(badFlag: Bool) throws {
        let directory = TemporaryDirectory(prefix: "json-log")
        defer { directory.remove() }
        let unusable = try directory.write([], to: "a-file") + "/data"
        let arguments =
            badFlag
            ? ["--log-format", "json", "--threads", "many"]
            : ["--log-format", "json", "--data-dir", unusable, "--listen", "127.0.0.1:0", "--grpc-listen", "off"]
        let child = try ChildProcess(executable: ServerProcess.debugExecutable, arguments: arguments)
        let outcome = try child.finish(timeoutMs: 15_000)
        #expect(outcome.exitCode == (badFlag ? 2 : 1), "\(outcome)")
        let lines = try Self.objects(outcome.standardError)
        #expect(lines.count == 1, "\(outcome)")
        #expect(lines.first?["level"].string == "error")
        #expect(lines.first?["msg"].string?.contains(badFlag ? "--threads" : unusable) == true, "\(outcome)")
        #expect(outcome.standardOutput.isEmpty, "\(outcome)")
    }
}
