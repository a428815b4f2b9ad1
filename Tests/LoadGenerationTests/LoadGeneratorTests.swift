import LoadGeneration
import ProtoBridge
import RPCCore
import RPCMessages
import RPCPosix
import Synchronization
import TestSupport
import Testing

/// The load engine in process against a real `RPCServer`: exact counts for a `total` run spread
/// over threads and connections, each body sent as often as the request numbering says, outcomes
/// by status and error code, a refused handshake.
@Suite("LoadGenerator")
struct LoadGeneratorTests {
    static func configuration(_ server: TestServer, path: String = DiagnosticsMethods.echo.path) -> LoadConfiguration {
        var configuration = LoadConfiguration()
        configuration.client = server.clientOptions
        configuration.path = path
        configuration.bodies = (0..<3).map {
            EchoRequest(payload: [UInt8](repeating: UInt8($0), count: $0 * 10)).serializedBytes()
        }
        configuration.callOptions = CallOptions(timeoutMs: 10_000)
        configuration.connections = 3
        configuration.depth = 4
        configuration.threads = 2
        configuration.total = 300
        return configuration
    }

    @Test("a total run over 3 connections on 2 threads measures exactly that many calls, every one OK")
    func totalRun() throws {
        let server = try TestServer()
        defer { server.stop() }
        let report = try LoadGenerator.run(Self.configuration(server))
        #expect(report.calls == 300)
        #expect(report.latency.count == 300)
        #expect(report.outcomes == ["OK": 300])
        #expect(report.connectionErrors.isEmpty)
        #expect(report.durationSeconds > 0 && report.callsPerSecond > 0)
        #expect(report.latency.minNanoseconds <= report.latency.percentile(0.5))
        #expect(report.latency.percentile(0.5) <= report.latency.maxNanoseconds)
    }

    /// The payload of every call a server's `Record` method received.
    final class Received: Sendable {
        static let record = ProtoMethod<EchoRequest, EchoResponse>(
            service: "test.Recorder", name: "Record", serverStreaming: false)
        let payloads = Mutex<[[UInt8]]>([])

        func register(in table: inout MethodTable) {
            table.addUnary(Self.record) { [self] request, _, responder in
                payloads.withLock { $0.append(request.payload) }
                responder.succeed(EchoResponse())
            }
        }
    }

    @Test(
        "a total run sends exactly total calls, numbered across threads: as many bodies as calls, each sent once",
        arguments: [LoadConfiguration.Transport.framed, .grpc])
    func everyBodyOnce(_ transport: LoadConfiguration.Transport) throws {
        let received = Received()
        let server = try TestServer(register: received.register)
        defer { server.stop() }
        var configuration = Self.configuration(server, path: Received.record.path)
        configuration.transport = transport
        configuration.bodies = (0..<300).map { EchoRequest(payload: Array("request \($0)".utf8)).serializedBytes() }
        let report = try LoadGenerator.run(configuration)
        #expect(report.calls == 300 && report.sentCalls == 300, "\(report.calls) measured, \(report.sentCalls) sent")
        let payloads = received.payloads.withLock { $0 }
        #expect(payloads.count == 300, "the server got no call beyond the total")
        #expect(Set(payloads).count == 300, "no body was sent twice")

        // Fewer bodies than calls: each is sent in turn, as often as the others (give or take one).
        received.payloads.withLock { $0 = [] }
        configuration.bodies = Array(configuration.bodies.prefix(7))
        configuration.total = 70
        let cycled = try LoadGenerator.run(configuration)
        #expect(cycled.sentCalls == 70)
        let counts = Dictionary(grouping: received.payloads.withLock { $0 }, by: { $0 }).mapValues(\.count)
        #expect(counts.count == 7 && counts.values.allSatisfy { $0 == 10 }, "\(counts.values)")
    }

    @Test("failed calls are counted by status name and ERR_ code")
    func failedCalls() throws {
        let server = try TestServer()
        defer { server.stop() }
        var configuration = Self.configuration(server, path: "/no.such.Service/Method")
        configuration.total = 40
        let report = try LoadGenerator.run(configuration)
        #expect(report.outcomes == ["UNIMPLEMENTED \(RuntimeErrorCode.unimplemented.name)": 40])
    }

    @Test("a HELLO the server refuses fails the run with the server's error")
    func refusedHello() throws {
        let server = try TestServer()
        defer { server.stop() }
        var configuration = Self.configuration(server)
        configuration.client.apiKey = "not-a-key"
        #expect {
            _ = try LoadGenerator.run(configuration)
        } throws: { error in
            (error as? RPCError)?.code == .unauthenticated
        }
    }
    /// A server (which serves gRPC on its port too), and a configuration that loads it over gRPC.
    static func grpcServer(limits: ServerLimits = ServerLimits()) throws -> (TestServer, LoadConfiguration) {
        let server = try TestServer(limits: limits)
        var configuration = Self.configuration(server)
        configuration.transport = .grpc
        return (server, configuration)
    }

    @Test("gRPC: a total run over 3 HTTP/2 connections × 4 streams on 2 threads measures exactly that many calls")
    func grpcTotalRun() throws {
        let (server, configuration) = try Self.grpcServer()
        defer { server.stop() }
        let report = try LoadGenerator.run(configuration)
        #expect(report.calls == 300)
        #expect(report.outcomes == ["OK": 300])
        #expect(report.connectionErrors.isEmpty)
        #expect(report.latency.minNanoseconds > 0 && report.latency.percentile(0.5) <= report.latency.maxNanoseconds)
    }

    @Test("gRPC: failed calls are counted by the status name and ERR_ code of their trailers")
    func grpcFailedCalls() throws {
        var (server, configuration) = try Self.grpcServer()
        defer { server.stop() }
        configuration.path = "/no.such.Service/Method"
        configuration.total = 40
        let report = try LoadGenerator.run(configuration)
        #expect(report.outcomes == ["UNIMPLEMENTED \(RuntimeErrorCode.unimplemented.name)": 40])

        configuration.path = DiagnosticsMethods.echo.path
        configuration.client.apiKey = "not-a-key"
        let refused = try LoadGenerator.run(configuration)
        #expect(refused.calls == 40)
        #expect(refused.outcomes.keys.allSatisfy { $0.hasPrefix("UNAUTHENTICATED") }, "\(refused.outcomes)")
    }

    @Test("gRPC: --depth over the server's SETTINGS_MAX_CONCURRENT_STREAMS fails the run before any call, naming it")
    func grpcDepthOverStreamLimit() throws {
        var limits = ServerLimits()
        limits.maxConcurrentCalls = 4
        var (server, configuration) = try Self.grpcServer(limits: limits)
        defer { server.stop() }
        configuration.depth = 5
        #expect {
            _ = try LoadGenerator.run(configuration)
        } throws: { error in
            guard let error = error as? RPCError else { return false }
            return error.code == .invalidArgument && error.message.contains("more than the 4 concurrent streams")
        }
        configuration.depth = 4
        #expect(try LoadGenerator.run(configuration).outcomes == ["OK": 300])
    }
}
