/// A service of a `Schema` and its methods.
///
/// Lets a tool list what a server offers (`rpc-probe list`) and find a method's types by name.
public struct ServiceDescriptor: Sendable, Hashable, CustomStringConvertible {
    let storage: SchemaStorage
    let index: Int

    var info: SchemaStorage.ServiceInfo { storage.services[index] }

    /// The fully-qualified name, e.g. "moderation.v1.Moderation".
    public var fullName: String { info.fullName }
    /// The name within its package, e.g. "Moderation".
    public var name: String { info.name }
    /// The `.proto` file that declares it.
    public var fileName: String { storage.files[info.fileIndex].name }
    /// The comment written before its declaration, without the `//` markers.
    public var leadingComments: String? { info.comments }

    /// The methods, in declaration order.
    public var methods: [MethodDescriptor] {
        info.methods.indices.map { MethodDescriptor(storage: storage, service: index, index: $0) }
    }

    /// The method with this (short) name, e.g. "KickMember".
    public func method(named name: String) -> MethodDescriptor? {
        guard let found = info.methods.firstIndex(where: { $0.name == name }) else { return nil }
        return MethodDescriptor(storage: storage, service: index, index: found)
    }

    public var description: String { fullName }

    public static func == (lhs: ServiceDescriptor, rhs: ServiceDescriptor) -> Bool {
        lhs.storage === rhs.storage && lhs.index == rhs.index
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(storage))
        hasher.combine(index)
    }
}
