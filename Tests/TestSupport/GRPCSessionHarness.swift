import ByteCoding
public import GRPCMessages
public import HTTP2Support
import ProtoBridge
public import RPCCore
import RPCGRPC
import RPCMessages

/// A connection's core on standard gRPC, driven by an in-process nghttp2 client, with a fake
/// port, a manual clock and a manual worker pool: the gRPC wire's rules checked with no socket
/// and no thread.
///
/// The method table holds `TestService`'s methods, whatever `register` adds, `GRPCHealth` and
/// `RuntimeServices` (Echo); reflection is the gRPC codec's bidirectional service, as the server
/// configures it. `pump` plays the transport and the loop: the client's bytes go to `receive`
/// (the core knows the wire from their preface), what handlers sent to `deliver`, the core's
/// output (`takeOutput`, `outbound`) to the client, until nothing moves; what the client
/// received is kept in `events`.
public final class GRPCSessionHarness {
    public let core: ConnectionCore
    public let client: HTTP2TestClient
    public let port = FakeCallPort()
    public let clock: ManualClock
    public let offload = ManualOffload()
    public let service = TestService()
    public let health = HealthStatus()
    public let memoryBudget: MemoryBudget
    public let limits: ServerLimits
    /// Deadlines the session asked the transport to arm, in order.
    public private(set) var deadlines: [(deadline: UInt64, streamID: UInt32)] = []
    /// What the session asked of the transport after the last thing the harness fed it.
    public private(set) var lastActions = TransportActions()
    /// Everything the client received, in order.
    public private(set) var events: [HTTP2TestClient.Event] = []
    /// Bytes the client sent that the core has not consumed yet (a frame not yet whole: the
    /// transport keeps those, and feeds them again with what follows).
    private var pendingInput: [UInt8] = []

    /// `authorization` of a request with the valid test key (`TestKeys`).
    public static let bearer = "Bearer \(Frames.appID):\(Frames.apiKey)"

    /// The services reflection lists: the method table's and reflection's own.
    public let reflectedServices: [String]

    public init(
        limits: ServerLimits = ServerLimits(), clock: ManualClock = ManualClock(),
        memoryBudget: MemoryBudget = .unlimited(), client: HTTP2TestClient = HTTP2TestClient(),
        observer: (any CallObserver)? = nil, register: (inout MethodTable) -> Void = { _ in }
    ) {
        self.clock = clock
        self.limits = limits
        self.memoryBudget = memoryBudget
        self.client = client
        var methods = MethodTable()
        service.register(in: &methods)
        register(&methods)
        GRPCHealth.register(in: &methods, health: health)
        RuntimeServices.register(
            in: &methods, health: health, fileDescriptorSets: [RPCSchema.fileDescriptorSet])
        let offload = self.offload
        let services = Set(methods.methods.map(\.service)).union([
            "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection",
        ])
        reflectedServices = services.sorted()
        var wire = GRPCWire()
        do {
            wire.bidirectional = [
                try GRPCReflection(
                    fileDescriptorSets: [RPCSchema.fileDescriptorSet, GRPCSchema.fileDescriptorSet],
                    services: Array(services))
            ]
        } catch {
            preconditionFailure("the built-in descriptor sets do not index: \(error)")
        }
        let environment = ServerEnvironment(
            serverName: "test-server", serverVersion: "9.9.9", limits: limits, methods: methods,
            authenticator: TestKeys(), logger: .disabled, offload: { offload.submit($0) },
            now: { [clock] in clock.now }, observer: observer, memoryBudget: memoryBudget, grpc: wire)
        core = ConnectionCore(environment: environment, port: port, peer: "10.0.0.1:5000")
    }

    /// The harness plays the transport: when it goes, so does the connection (calls still live
    /// end, and their termination handlers release what they capture).
    deinit {
        core.connectionClosed()
    }

    // MARK: Driving

    /// Carries bytes and deliveries both ways until nothing moves.
    public func pump() {
        while true {
            var moved = false
            let request = client.output()
            if !request.isEmpty {
                moved = true
                pendingInput += request
            }
            if !pendingInput.isEmpty {
                let (consumed, _, actions) = pendingInput.withUnsafeBytes { core.receive($0) }
                record(actions)
                pendingInput.removeFirst(consumed)
            }
            for delivery in port.take() {
                moved = true
                record(core.deliver(streamID: delivery.streamID, delivery.part))
            }
            for _ in 0..<port.takeLargeRequestsTakenIn() {
                moved = true
                record(core.largeRequestTakenIn())
            }
            core.takeOutput()
            if !core.outbound.isEmpty {
                moved = true
                let response = core.outbound
                core.outbound.removeAll()
                events += client.receive(response)
            }
            if !moved { return }
        }
    }

    /// Feeds `bytes` as if read from the socket (no client involved) and returns what the session
    /// wrote in answer.
    public func receiveRaw(_ bytes: [UInt8]) -> [UInt8] {
        pendingInput += bytes
        let (consumed, _, actions) = pendingInput.withUnsafeBytes { core.receive($0) }
        record(actions)
        pendingInput.removeFirst(consumed)
        core.takeOutput()
        defer { core.outbound.removeAll() }
        return core.outbound
    }

    /// Runs the work offloaded to the "worker pool", then pumps its results to the client.
    @discardableResult
    public func runWorkers() -> Int {
        let count = offload.runAll()
        pump()
        return count
    }

    /// Moves the clock by `ms`, fires the deadline timer as the loop would, and pumps.
    public func expireDeadlines(afterMs ms: Int) {
        clock.advance(ms: ms)
        record(core.expireDeadlines(now: clock.now))
        pump()
    }

    /// Begins the graceful drain and pumps.
    public func beginDrain() {
        record(core.beginDrain())
        pump()
    }

    private func record(_ actions: TransportActions) {
        lastActions = actions
        if let timer = actions.armDeadlineTimer { deadlines.append((timer.deadline, timer.streamID)) }
    }

    // MARK: Requests

    /// The headers of a gRPC request to `path`: `authorization` (nil: none) and `extra` added.
    public static func headers(
        path: String, authorization: String? = bearer, extra: [HTTP2Header] = []
    ) -> [HTTP2Header] {
        var headers = HTTP2TestClient.requestHeaders(path: path)
        if let authorization { headers.append(HTTP2Header("authorization", authorization)) }
        return headers + extra
    }

    /// One message framed for gRPC: the compressed flag, the big-endian length, the bytes.
    public static func frame(_ message: [UInt8], compressed: Bool = false) -> [UInt8] {
        let n = UInt32(message.count)
        return [compressed ? 1 : 0, UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
            + message
    }

    /// Sends a request (`headers`, then `body` as it is, END_STREAM unless `endStream` is false)
    /// and pumps; returns the stream id.
    @discardableResult
    public func send(headers: [HTTP2Header], body: [UInt8]?, endStream: Bool = true) -> Int32 {
        let id = client.request(headers: headers, body: body, endStream: endStream)
        pump()
        return id
    }

    /// Sends a gRPC request to `path` with one message (compressed as given) and pumps;
    /// returns the stream id.
    @discardableResult
    public func start(
        path: String, message: [UInt8], compressed: Bool = false, authorization: String? = bearer,
        extra: [HTTP2Header] = []
    ) -> Int32 {
        send(
            headers: Self.headers(path: path, authorization: authorization, extra: extra),
            body: Self.frame(message, compressed: compressed))
    }

    /// `start`, then the response as the client has it so far.
    public func call(
        path: String, message: [UInt8], compressed: Bool = false, authorization: String? = bearer,
        extra: [HTTP2Header] = []
    ) -> GRPCResponse {
        response(
            start(path: path, message: message, compressed: compressed, authorization: authorization, extra: extra))
    }

    /// What the client received on stream `id` so far.
    public func response(_ id: Int32) -> GRPCResponse {
        var response = GRPCResponse()
        for event in events {
            switch event {
            case .headers(let stream, let headers, let endStream) where stream == id:
                if response.headers.isEmpty {
                    response.headers = headers
                    response.trailersOnly = endStream
                }
                if endStream {
                    response.trailers = headers
                    response.ended = true
                }
            case .data(let stream, let bytes, let endStream) where stream == id:
                response.body += bytes
                if endStream { response.ended = true }
            case .reset(let stream, let code) where stream == id:
                response.reset = code
            case .closed(let stream, let code) where stream == id:
                response.closed = code
            default:
                break
            }
        }
        return response
    }

    /// GOAWAY frames the client received: (last stream id, error code).
    public var goaways: [(lastStreamID: Int32, errorCode: UInt32)] {
        events.compactMap {
            guard case .goaway(let last, let code) = $0 else { return nil }
            return (last, code)
        }
    }
}

/// One gRPC response as the client received it.
public struct GRPCResponse: Sendable {
    /// The first header block (`:status`, `content-type`, …; all of it for trailers-only).
    public var headers: [HTTP2Header] = []
    /// The block that ended the stream (the trailers; the headers themselves when trailers-only).
    public var trailers: [HTTP2Header] = []
    /// The DATA received, joined.
    public var body: [UInt8] = []
    /// The response was one HEADERS frame with END_STREAM.
    public var trailersOnly = false
    /// END_STREAM arrived.
    public var ended = false
    /// The server reset the stream, with this code.
    public var reset: UInt32?
    /// The client's session closed the stream, with this code (0 for a normal end;
    /// REFUSED_STREAM, 7, for one a GOAWAY said was not processed).
    public var closed: UInt32?

    public init() {}

    public var httpStatus: String? { headers.first(named: ":status") }
    public var grpcStatus: Int? { trailers.first(named: "grpc-status").flatMap { Int($0) } }
    /// `grpc-message` as sent (percent-encoded).
    public var grpcMessage: String? { trailers.first(named: "grpc-message") }

    /// One length-prefixed message of the body.
    public struct Message: Equatable, Sendable {
        public var compressed: Bool
        public var bytes: [UInt8]
    }

    /// The body cut into its messages; throws when it does not end on a message's end.
    public func messages() throws -> [Message] {
        var messages: [Message] = []
        var index = 0
        while index < body.count {
            guard index + 5 <= body.count, body[index] <= 1 else {
                throw TestFailure("a bad message prefix at \(index) of \(body.count) bytes")
            }
            let length = body[index + 1..<index + 5].reduce(0) { $0 << 8 | Int($1) }
            guard index + 5 + length <= body.count else { throw TestFailure("a message cut short") }
            messages.append(Message(compressed: body[index] == 1, bytes: Array(body[index + 5..<index + 5 + length])))
            index += 5 + length
        }
        return messages
    }

    /// The `google.rpc.Status` of `grpc-status-details-bin` (base64, unpadded), decoded.
    public func statusDetails() throws -> Google_Rpc_Status {
        guard let text = trailers.first(named: "grpc-status-details-bin") else {
            throw TestFailure("no grpc-status-details-bin in \(trailers)")
        }
        return try Google_Rpc_Status(serializedBytes: try Base64.decode(text, padding: .optional))
    }

    /// The one `google.rpc.ErrorInfo` of the status details.
    public func errorInfo() throws -> Google_Rpc_ErrorInfo {
        let status = try statusDetails()
        guard status.details.count == 1, let info = try status.details[0].unpack(Google_Rpc_ErrorInfo.self) else {
            throw TestFailure("expected one ErrorInfo in \(status)")
        }
        return info
    }
}
