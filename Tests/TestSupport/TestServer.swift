public import RPCCore
import RPCGRPC
public import RPCMessages
public import RPCPosix
public import TLSSupport

/// A real `RPCServer` on 127.0.0.1, port chosen by the kernel, with the runtime services, the
/// `TestService` methods, any extra methods, and `TestKeys` as authenticator; it serves standard
/// gRPC on the same port, as the process does (`grpc: false` for our protocol only).
///
/// Call `stop()` when done (it is idempotent); `checkServing()` proves that the server still
/// serves a fresh client after whatever a test did to another connection.
public final class TestServer: Sendable {
    public let server: RPCServer
    public let port: UInt16
    public let service: TestService
    public let health: HealthStatus
    /// How `clientOptions` speak TLS to a TLS server (nil: plaintext).
    public let clientTLS: TLSClientConfiguration?
    /// The clock of the server's loops when the test moves it (`advance`); nil: the system's.
    public let clock: ManualClock?

    /// Starts a server.
    /// - Parameters:
    ///   - limits: the limits every connection gets (short timeouts make timeout tests fast).
    ///   - eventLoops: loops; the default 2 gives two connections a chance to land on different loops.
    ///   - workers: worker threads for `.workerPool` methods.
    ///   - register: adds methods beyond the runtime services and `TestService`.
    ///   - configure: changes to the server's configuration (memory budget, connection caps, TLS).
    ///   - clientTLS: how `clientOptions` (and so `connect` and `checkServing`) speak TLS.
    ///   - clock: a clock the test moves with `advance`, for timeouts tested without sleeping.
    ///   - grpc: serve standard gRPC too.
    public init(
        limits: ServerLimits = ServerLimits(), eventLoops: Int = 2, workers: Int = 2, logger: Logger = .disabled,
        register: (inout MethodTable) -> Void = { _ in }, configure: (inout RPCServer.Configuration) -> Void = { _ in },
        clientTLS: TLSClientConfiguration? = nil, clock: ManualClock? = nil, grpc: Bool = true
    ) throws {
        let service = TestService()
        let health = HealthStatus()
        var methods = MethodTable()
        service.register(in: &methods)
        register(&methods)
        if grpc { GRPCHealth.register(in: &methods, health: health) }
        RuntimeServices.register(in: &methods, health: health, fileDescriptorSets: [RPCSchema.fileDescriptorSet])
        var configuration = RPCServer.Configuration()
        configuration.port = 0
        configuration.eventLoops = eventLoops
        configuration.workers = workers
        configuration.limits = limits
        configuration.serverName = "test-server"
        configuration.serverVersion = "9.9.9"
        configuration.logger = logger
        if let clock { configuration.clock = clock }
        if grpc { configuration.grpc = GRPCWire() }
        configure(&configuration)
        server = RPCServer(configuration: configuration, methods: methods, authenticator: TestKeys())
        port = try server.start()
        self.service = service
        self.health = health
        self.clientTLS = clientTLS
        self.clock = clock
    }

    /// Returns once the loops have handled everything sent to them before the call (read it,
    /// answered it): on a manual clock, what a test sent is in before it moves the time.
    public func settle() {
        server.waitForLoops()
    }

    /// Moves the manual clock by `ms` and returns once the loops have run the timers that came due
    /// and written what they asked for. What the test did before (connected, sent) is taken in
    /// first, at the old time: a connection accepted after the move would start its timers late.
    public func advance(ms: Int) {
        guard let clock else { preconditionFailure("advance(ms:) needs a server made with a ManualClock") }
        server.waitForLoops()
        clock.advance(ms: ms)
        server.waitForLoops()
    }

    /// Shuts the server down gracefully (see `RPCServer.shutdown`).
    public func stop(gracePeriodMs: Int = 2_000) {
        server.shutdown(gracePeriodMs: gracePeriodMs)
    }

    /// Client options for this server with the valid test key.
    public var clientOptions: ClientOptions {
        var options = ClientOptions(port: port, apiKey: Frames.apiKey)
        options.clientName = "test-client"
        options.tls = clientTLS
        return options
    }

    /// A client connection, with options adjusted by `configure`.
    public func connect(_ configure: (inout ClientOptions) -> Void = { _ in }) throws(RPCError) -> ClientConnection {
        var options = clientOptions
        configure(&options)
        return try ClientConnection.connect(options)
    }

    /// A raw socket to the server, before the preface.
    public func raw() throws -> RawConnection {
        try RawConnection(port: port)
    }

    /// A raw socket that has completed the handshake.
    public func rawOpen(acceptDeflate: Bool = false) throws -> (connection: RawConnection, ack: HelloAck) {
        let connection = try raw()
        let ack = try connection.handshake(acceptDeflate: acceptDeflate)
        return (connection, ack)
    }

    /// Connections the server has open now.
    public var connectionCount: Int { server.connectionCount }

    /// Waits until the server has exactly `count` connections open.
    public func waitForConnections(_ count: Int, timeoutMs: Int = 5_000) -> Bool {
        waitUntil(timeoutMs: timeoutMs) { server.connectionCount == count }
    }

    /// Proves the server still serves: a fresh client connects, makes an Echo and a health check.
    /// - Throws: what went wrong, when anything did.
    public func checkServing() throws {
        let connection = try connect()
        defer { connection.close() }
        let payload = (0..<64).map { _ in UInt8.random(in: 0...255) }
        let reply = try connection.unary(
            DiagnosticsMethods.echo, EchoRequest(payload: payload), options: CallOptions(timeoutMs: 5_000))
        guard reply.payload == payload else { throw TestFailure("Echo answered \(reply.payload.count) other bytes") }
        let health = try connection.unary(
            HealthMethods.check, HealthCheckRequest(), options: CallOptions(timeoutMs: 5_000))
        guard health.status == .serving else { throw TestFailure("health is \(health.status)") }
    }
}
