public import ProtoBridge

/// Packing a message into `google.protobuf.Any` and reading it back, as the protobuf runtimes do:
/// the type URL is a prefix (`type.googleapis.com/` by convention) and the message's full name,
/// and only the part after the URL's last `/` names the type.
extension Google_Protobuf_Any {
    /// The prefix every protobuf runtime writes and gRPC's rich error model expects.
    public static let defaultTypeURLPrefix = "type.googleapis.com/"

    /// An `Any` holding `message`, encoded, under `prefix` + its full name.
    public init<M: ProtoMessage>(packing message: M, typeURLPrefix prefix: String = defaultTypeURLPrefix) {
        self.init(typeURL: prefix + M.protoName, value: message.serializedBytes())
    }

    /// The full name of the message type the URL names (e.g. `google.rpc.ErrorInfo`).
    public var typeName: Substring {
        guard let slash = typeURL.lastIndex(of: "/") else { return typeURL[...] }
        return typeURL[typeURL.index(after: slash)...]
    }

    /// True when the `Any` holds a message of type `M`.
    public func holds<M: ProtoMessage>(_ type: M.Type) -> Bool {
        typeName == M.protoName
    }

    /// The held message decoded as `M`, or nil when the `Any` holds another type.
    public func unpack<M: ProtoMessage>(_ type: M.Type) throws(ProtoDecodingError) -> M? {
        guard holds(type) else { return nil }
        return try M(serializedBytes: value)
    }
}
