/// A method of a service: its call path, message types and streaming sides.
///
/// What a client needs to make a call it was not compiled for: the path to put in the call
/// header, the type to encode the request as, the type to decode replies as, and whether the
/// server answers with a stream.
public struct MethodDescriptor: Sendable, Hashable, CustomStringConvertible {
    let storage: SchemaStorage
    let serviceIndex: Int
    let index: Int

    init(storage: SchemaStorage, service: Int, index: Int) {
        self.storage = storage
        self.serviceIndex = service
        self.index = index
    }

    var info: SchemaStorage.MethodInfo { storage.services[serviceIndex].methods[index] }

    /// The method's name, e.g. "KickMember".
    public var name: String { info.name }
    /// The service the method belongs to.
    public var service: ServiceDescriptor { ServiceDescriptor(storage: storage, index: serviceIndex) }
    /// The fully-qualified name, e.g. "moderation.v1.Moderation.KickMember".
    public var fullName: String { "\(storage.services[serviceIndex].fullName).\(info.name)" }
    /// The call path, e.g. "/moderation.v1.Moderation/KickMember".
    public var path: String { "/\(storage.services[serviceIndex].fullName)/\(info.name)" }
    /// The request message type.
    public var inputType: MessageDescriptor { MessageDescriptor(storage: storage, index: info.inputIndex) }
    /// The response (or stream message) type.
    public var outputType: MessageDescriptor { MessageDescriptor(storage: storage, index: info.outputIndex) }
    /// True when the client sends a stream of requests.
    public var clientStreaming: Bool { info.clientStreaming }
    /// True when the server answers with a stream of responses.
    public var serverStreaming: Bool { info.serverStreaming }
    /// The comment written before the method, without the `//` markers.
    public var leadingComments: String? { info.comments }

    public var description: String { fullName }

    public static func == (lhs: MethodDescriptor, rhs: MethodDescriptor) -> Bool {
        lhs.storage === rhs.storage && lhs.serviceIndex == rhs.serviceIndex && lhs.index == rhs.index
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(storage))
        hasher.combine(serviceIndex)
        hasher.combine(index)
    }
}
