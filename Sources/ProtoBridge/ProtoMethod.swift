/// A method of a service, as the .proto declares it: its path and message types.
///
/// Generated per method (e.g. `ModerationMethods.kickMember`); routers register handlers by it and
/// clients call through it, so a path and its types can never disagree.
public struct ProtoMethod<Request: ProtoMessage, Response: ProtoMessage>: ProtoMethodDescription {
    public let service: String
    public let name: String
    public let path: String
    public let clientStreaming: Bool
    public let serverStreaming: Bool

    /// - Parameter clientStreaming: true when the client sends a stream (the .proto's
    ///   `rpc M(stream Request)`); generated code always states it, hand-written test methods
    ///   may leave it out.
    public init(service: String, name: String, clientStreaming: Bool = false, serverStreaming: Bool) {
        self.service = service
        self.name = name
        self.path = "/\(service)/\(name)"
        self.clientStreaming = clientStreaming
        self.serverStreaming = serverStreaming
    }

    public var requestType: String { Request.protoName }
    public var responseType: String { Response.protoName }
}

/// What is known of a method without its Swift types: for reflection and method tables.
public protocol ProtoMethodDescription: Sendable {
    /// Fully-qualified service name, e.g. "moderation.v1.Moderation".
    var service: String { get }
    /// Method name, e.g. "KickMember".
    var name: String { get }
    /// gRPC-style path, e.g. "/moderation.v1.Moderation/KickMember".
    var path: String { get }
    /// True when the client sends a stream of requests (client-streaming or bidirectional).
    var clientStreaming: Bool { get }
    /// True when the server answers with a stream.
    var serverStreaming: Bool { get }
    /// Fully-qualified request type.
    var requestType: String { get }
    /// Fully-qualified response (or stream message) type.
    var responseType: String { get }
}
