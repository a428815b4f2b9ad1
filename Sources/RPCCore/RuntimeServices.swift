import ProtoBridge
import RPCMessages
import Synchronization

/// Whether the server (and each service) is ready, as the Health service reports it.
///
/// A draining server reports NOT_SERVING so load balancers stop sending it new work.
public final class HealthStatus: Sendable {
    private let serving = Mutex<Bool>(true)

    public init() {}

    /// Sets whether the server as a whole serves.
    public func setServing(_ value: Bool) { serving.withLock { $0 = value } }

    public var isServing: Bool { serving.withLock { $0 } }
}

/// The services every server carries: reflection, health and diagnostics (Echo).
public enum RuntimeServices {
    /// The services tools call to find their way rather than to do work: reflection and health,
    /// ours and gRPC's standard ones. Their calls are "internal": the access log leaves them out
    /// unless asked, and the metrics count them apart from the service's own calls.
    static let internalServices: Set<Substring> = [
        Substring(HealthMethods.name), Substring(ReflectionMethods.name), "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection",
    ]

    /// True when `path` (`/package.Service/Method`) is a method of an internal service.
    public static func isInternal(path: String) -> Bool {
        guard path.first == "/", let slash = path.dropFirst().firstIndex(of: "/") else { return false }
        return internalServices.contains(path[path.index(after: path.startIndex)..<slash])
    }

    /// Adds diagnostics, health and reflection to `table`. Call it last: reflection lists every
    /// method of the table as it is then, these three services included.
    /// - Parameter fileDescriptorSets: serialized FileDescriptorSets of every served proto; they
    ///   are concatenated, which protobuf merges into one set.
    public static func register(in table: inout MethodTable, health: HealthStatus, fileDescriptorSets: [[UInt8]]) {
        table.addUnary(DiagnosticsMethods.echo) { request, _, responder in
            responder.succeed(EchoResponse(payload: request.payload))
        }

        var services = Set(table.methods.map(\.service))
        services.insert(HealthMethods.name)
        services.insert(ReflectionMethods.name)
        let known = services
        table.addUnary(HealthMethods.check, allowsAnonymous: true) { request, _, responder in
            let status: ServingStatus
            if !request.service.isEmpty && !known.contains(request.service) {
                status = .serviceUnknown
            } else {
                status = health.isServing ? .serving : .notServing
            }
            responder.succeed(HealthCheckResponse(status: status))
        }

        let descriptorSet = fileDescriptorSets.reduce([], +)
        table.addUnary(ReflectionMethods.getFileDescriptorSet) { _, _, responder in
            responder.succeed(GetFileDescriptorSetResponse(fileDescriptorSet: descriptorSet))
        }
        let reflected = table.methods + [ReflectionMethods.listServices]
        let listing = Dictionary(grouping: reflected, by: \.service).map { name, methods in
            ServiceInfo(
                name: name,
                methods: methods.map {
                    MethodInfo(
                        name: $0.name, path: $0.path, requestType: $0.requestType, responseType: $0.responseType,
                        clientStreaming: $0.clientStreaming, serverStreaming: $0.serverStreaming)
                })
        }.sorted { $0.name < $1.name }
        table.addUnary(ReflectionMethods.listServices) { request, _, responder in
            let services = request.service.isEmpty ? listing : listing.filter { $0.name == request.service }
            responder.succeed(ListServicesResponse(services: services))
        }
    }
}
