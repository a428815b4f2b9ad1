import ProtoBridge
import RPCCore
import RPCMessages
import RPCPosix
import TestSupport
import Testing

@Suite("Smoke: the runtime services over a real socket")
struct SmokeTests {
    @Test("Echo, health, reflection and a compressed Echo on one connection; a wrong key is refused")
    func echoOverARealSocket() throws {
        let server = try TestServer()
        defer { server.stop() }
        let connection = try server.connect()
        defer { connection.close() }
        let reply = try connection.unary(DiagnosticsMethods.echo, EchoRequest(payload: [1, 2, 3]))
        #expect(reply.payload == [1, 2, 3])
        let health = try connection.unary(HealthMethods.check, HealthCheckRequest())
        #expect(health.status == .serving)
        let services = try connection.unary(ReflectionMethods.listServices, ListServicesRequest())
        #expect(services.services.map(\.name).contains("mrpc.diagnostics.v1.Diagnostics"))
        #expect(throws: RPCError.self) { try server.connect { $0.apiKey = "wrong-key-000" } }
        let big = EchoRequest(payload: [UInt8](repeating: 7, count: 100_000))
        let options = CallOptions(acceptDeflate: true, compressRequest: true)
        #expect(try connection.unary(DiagnosticsMethods.echo, big, options: options).payload == big.payload)
    }

    @Test("A worker-pool method runs on the loop for the requests its offloadWhen keeps there")
    func offloadIsDecidedPerRequest() throws {
        let server = try TestServer()
        defer { server.stop() }
        let connection = try server.connect()
        defer { connection.close() }
        let inline = try connection.unary(TestService.threadName, EchoRequest(payload: []))
        let offloaded = try connection.unary(TestService.threadName, EchoRequest(payload: [1]))
        #expect(String(decoding: inline.payload, as: UTF8.self).hasPrefix("loop-"))
        #expect(String(decoding: offloaded.payload, as: UTF8.self).hasPrefix("worker-"))
    }
}
