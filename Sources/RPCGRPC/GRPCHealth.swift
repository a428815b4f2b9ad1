import GRPCMessages
import ProtoBridge
public import RPCCore

/// `grpc.health.v1.Health`, the standard health service Kubernetes probes, load balancers and
/// grpcurl call, over the server's `HealthStatus` (NOT_SERVING while draining). Registered in the
/// method table like any service, so our own protocol serves it too.
public enum GRPCHealth {
    /// Adds Check, List and Watch to `table`. Call it after the server's own services and before
    /// `RuntimeServices.register` (whose services it knows by name anyway).
    public static func register(in table: inout MethodTable, health: HealthStatus) {
        var known = Set(table.methods.map(\.service))
        known.formUnion([
            Grpc_Health_V1_HealthMethods.name, "grpc.reflection.v1.ServerReflection",
            "grpc.reflection.v1alpha.ServerReflection", "mrpc.health.v1.Health", "mrpc.reflection.v1.Reflection",
            "mrpc.diagnostics.v1.Diagnostics",
        ])
        let services = known
        @Sendable func status(of service: String) -> Grpc_Health_V1_HealthCheckResponse.ServingStatus? {
            guard service.isEmpty || services.contains(service) else { return nil }
            return health.isServing ? .serving : .notServing
        }
        table.addUnary(Grpc_Health_V1_HealthMethods.check, allowsAnonymous: true) { request, _, responder in
            guard let serving = status(of: request.service) else {
                responder.fail(
                    RPCError(.notFound, "no service \(request.service) on this server"))
                return
            }
            responder.succeed(Grpc_Health_V1_HealthCheckResponse(status: serving))
        }
        table.addUnary(Grpc_Health_V1_HealthMethods.list, allowsAnonymous: true) { _, _, responder in
            var statuses: [String: Grpc_Health_V1_HealthCheckResponse] = [:]
            for service in services.union([""]) {
                statuses[service] = Grpc_Health_V1_HealthCheckResponse(status: status(of: service) ?? .serviceUnknown)
            }
            responder.succeed(Grpc_Health_V1_HealthListResponse(statuses: statuses))
        }
        // The status now, then NOT_SERVING when the server drains, after which the stream ends
        // with UNAVAILABLE like every stream of a draining server.
        table.addServerStream(Grpc_Health_V1_HealthMethods.watch, allowsAnonymous: true) { request, _, stream in
            let serving = status(of: request.service)
            stream.send(Grpc_Health_V1_HealthCheckResponse(status: serving ?? .serviceUnknown))
            stream.onTermination { reason in
                guard reason == .draining else { return }
                stream.send(Grpc_Health_V1_HealthCheckResponse(status: serving == nil ? .serviceUnknown : .notServing))
                stream.finish(.unavailable("the server is shutting down"))
            }
        }
    }
}
