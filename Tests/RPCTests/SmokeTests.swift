import ProtoBridge
import RPCCore
import RPCMessages
import RPCPosix
import Testing

struct StaticKeys: Authenticator {
    func authenticate(apiKey: String, appID: String) -> String? { apiKey == "test-key-123" ? "app1" : nil }
}

@Test func echoOverARealSocket() throws {
    var methods = MethodTable()
    RuntimeServices.register(in: &methods, health: HealthStatus(), fileDescriptorSets: [RPCSchema.fileDescriptorSet])
    var configuration = RPCServer.Configuration()
    configuration.port = 0
    configuration.logger = .disabled
    let server = RPCServer(configuration: configuration, methods: methods, authenticator: StaticKeys())
    let port = try server.start()
    defer { server.shutdown(gracePeriodMs: 1000) }
    let connection = try ClientConnection.connect(ClientOptions(port: port, apiKey: "test-key-123"))
    let reply = try connection.unary(DiagnosticsService.echo, EchoRequest(payload: [1, 2, 3]))
    #expect(reply.payload == [1, 2, 3])
    let health = try connection.unary(HealthService.check, HealthCheckRequest())
    #expect(health.status == .serving)
    let services = try connection.unary(ReflectionService.listServices, ListServicesRequest())
    #expect(services.services.map(\.name).contains("mrpc.diagnostics.v1.Diagnostics"))
    #expect(throws: RPCError.self) { try ClientConnection.connect(ClientOptions(port: port, apiKey: "wrong-key-000")) }
    let big = EchoRequest(payload: [UInt8](repeating: 7, count: 100_000))
    var options = CallOptions()
    options.acceptDeflate = true
    options.compressRequest = true
    #expect(try connection.unary(DiagnosticsService.echo, big, options: options).payload == big.payload)
}
