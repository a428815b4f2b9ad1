import ProtoBridge
public import RPCCore
import RPCMessages
public import RPCPosix

/// An in-process `RPCServer` with a single method and nothing else — no reflection, no health —
/// for clients that must cope without reflection and for checking what a client put in its
/// CallHeader.
///
/// Its one method is `mrpc.diagnostics.v1.Diagnostics/Echo`: a non-empty payload is echoed; an
/// empty one is answered with the call's header as the server saw it, as a serialized
/// `CallHeader` (method, `timeout_ms` left of the deadline, on_behalf_of, idempotency_key,
/// request_id, metadata). Keys are `TestKeys`.
public final class HeaderEchoServer: Sendable {
    public let server: RPCServer
    public let port: UInt16

    public init(limits: ServerLimits = ServerLimits()) throws {
        var methods = MethodTable()
        methods.addUnary(DiagnosticsMethods.echo) { request, context, responder in
            guard request.payload.isEmpty else {
                responder.succeed(EchoResponse(payload: request.payload))
                return
            }
            let left =
                context.deadline.map { deadline in
                    UInt32(clamping: (deadline > monotonicNow() ? deadline - monotonicNow() : 0) / 1_000_000)
                } ?? 0
            let seen = CallHeader(
                method: context.method, timeoutMs: left, onBehalfOf: context.onBehalfOf,
                idempotencyKey: context.idempotencyKey,
                requestID: context.requestID, metadata: context.metadata)
            responder.succeed(EchoResponse(payload: seen.serializedBytes()))
        }
        var configuration = RPCServer.Configuration()
        configuration.port = 0
        configuration.eventLoops = 1
        configuration.limits = limits
        configuration.serverName = "header-echo"
        configuration.logger = .disabled
        server = RPCServer(configuration: configuration, methods: methods, authenticator: TestKeys())
        port = try server.start()
    }

    /// "127.0.0.1:PORT".
    public var address: String { "127.0.0.1:\(port)" }

    /// Shuts the server down.
    public func stop() {
        server.shutdown(gracePeriodMs: 1_000)
    }
}
