import NameSuggestion

/// Every message, enum, service and method of a `FileDescriptorSet`, resolved and looked up by
/// fully-qualified name.
///
/// `rpc-probe` talks to servers whose build it does not know: it fetches their descriptor set
/// (over reflection, or from a file) and drives every encoding, decoding, JSON conversion and
/// `describe` from a `Schema` instead of generated code. The descriptor bytes are parsed by a
/// small wire reader of its own, so a malformed set is a thrown error, never a crash.
public struct Schema: Sendable {
    let storage: SchemaStorage

    /// Parses a serialized `google.protobuf.FileDescriptorSet`.
    ///
    /// Concatenated sets are one valid set (their `file` fields add up); a file that appears more
    /// than once (a shared import) is kept once, the first time it appears.
    /// - Throws: `ProtoSchemaError` with code `.invalidDescriptor` when the bytes are malformed,
    ///   a name is defined twice or a type reference cannot be resolved.
    public init(fileDescriptorSet bytes: [UInt8]) throws(ProtoSchemaError) {
        try self.init(fileDescriptorSets: [bytes])
    }

    /// Parses several serialized `FileDescriptorSet`s as one (see `init(fileDescriptorSet:)`).
    public init(fileDescriptorSets sets: [[UInt8]]) throws(ProtoSchemaError) {
        var files: [DescriptorSetDecoder.File] = []
        for (i, bytes) in sets.enumerated() {
            let result = bytes.withUnsafeBytes { raw in
                Result { () throws(WireReader.Failure) in try DescriptorSetDecoder.files(raw) }
            }
            switch result {
            case .success(let decoded): files += decoded
            case .failure(let failure):
                let which = sets.count > 1 ? " #\(i + 1)" : ""
                throw ProtoSchemaError(
                    code: .invalidDescriptor,
                    message: "invalid descriptor set\(which): not a valid FileDescriptorSet: \(failure.reason)")
            }
        }
        storage = try SchemaBuilder.build(files)
    }

    /// The names of the `.proto` files, in the order they were read.
    public var fileNames: [String] { storage.files.map(\.name) }

    /// The files `fileName` imports, as its `dependency` list names them; nil for a file the set
    /// does not hold.
    public func dependencies(ofFile fileName: String) -> [String]? {
        storage.files.first { $0.name == fileName }?.dependencies
    }

    /// Every message type, nested ones (and map entries) included, file by file in declaration order.
    public var messages: [MessageDescriptor] {
        storage.messages.indices.map { MessageDescriptor(storage: storage, index: $0) }
    }

    /// Every enum type, nested ones included.
    public var enums: [EnumDescriptor] {
        storage.enums.indices.map { EnumDescriptor(storage: storage, index: $0) }
    }

    /// Every service, in declaration order.
    public var services: [ServiceDescriptor] {
        storage.services.indices.map { ServiceDescriptor(storage: storage, index: $0) }
    }

    /// The message type with this fully-qualified name ("moderation.v1.User", a leading dot allowed).
    public func message(named name: String) -> MessageDescriptor? {
        guard case .message(let index)? = storage.symbols[Self.withoutLeadingDot(name)] else { return nil }
        return MessageDescriptor(storage: storage, index: index)
    }

    /// The enum type with this fully-qualified name (a leading dot allowed).
    public func enumType(named name: String) -> EnumDescriptor? {
        guard case .enumType(let index)? = storage.symbols[Self.withoutLeadingDot(name)] else { return nil }
        return EnumDescriptor(storage: storage, index: index)
    }

    /// The service with this fully-qualified name (a leading dot allowed).
    public func service(named name: String) -> ServiceDescriptor? {
        guard case .service(let index)? = storage.symbols[Self.withoutLeadingDot(name)] else { return nil }
        return ServiceDescriptor(storage: storage, index: index)
    }

    /// The method named by a call path or a symbol: "/pkg.Service/Method", "pkg.Service/Method",
    /// "pkg.Service.Method" (a leading dot allowed).
    public func method(named name: String) -> MethodDescriptor? {
        var symbol = Self.withoutLeadingDot(name)
        if symbol.hasPrefix("/") { symbol.removeFirst() }
        if let slash = symbol.lastIndex(of: "/") {
            symbol.replaceSubrange(slash...slash, with: ".")
        }
        guard case .method(let service, let method)? = storage.symbols[symbol] else { return nil }
        return MethodDescriptor(storage: storage, service: service, index: method)
    }

    /// The method with this call path ("/pkg.Service/Method").
    public func method(path: String) -> MethodDescriptor? {
        guard path.hasPrefix("/"), path.dropFirst().contains("/") else { return nil }
        return method(named: path)
    }

    /// Like `message(named:)`, but an unknown name is an error that says so.
    public func requireMessage(named name: String) throws(ProtoSchemaError) -> MessageDescriptor {
        guard let message = message(named: name) else {
            throw ProtoSchemaError(
                code: .unknownSymbol, message: "no message type named \"\(Self.withoutLeadingDot(name))\" in the schema"
            )
        }
        return message
    }

    /// Like `method(named:)`, but an unknown name is an error that says so, naming the closest
    /// method when one is near (a typo, or a bare method name without its service).
    public func requireMethod(named name: String) throws(ProtoSchemaError) -> MethodDescriptor {
        guard let method = method(named: name) else {
            let methods = services.flatMap(\.methods)
            let paths = Dictionary(uniqueKeysWithValues: methods.map { ($0.fullName, String($0.path.dropFirst())) })
            let hint = Suggestion.hint(
                for: Self.withoutLeadingDot(name).replacingSlashes(), among: methods.map(\.fullName),
                quote: { "\"\(paths[$0] ?? $0)\"" })
            throw ProtoSchemaError(code: .unknownSymbol, message: "no method named \"\(name)\" in the schema" + hint)
        }
        return method
    }

    static func withoutLeadingDot(_ name: String) -> String {
        name.hasPrefix(".") ? String(name.dropFirst()) : name
    }
}

extension String {
    /// "/pkg.Service/Method" and "pkg.Service/Method" as the symbol "pkg.Service.Method".
    func replacingSlashes() -> String {
        var symbol = hasPrefix("/") ? String(dropFirst()) : self
        if let slash = symbol.lastIndex(of: "/") { symbol.replaceSubrange(slash...slash, with: ".") }
        return symbol
    }
}
