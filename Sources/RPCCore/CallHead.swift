/// What a wire read of a call before its request message, in one shape whichever wire carried
/// it: our `CallHeader`, or a gRPC request's header block.
public struct CallHead: Sendable, Equatable {
    /// The method path, e.g. "/moderation.v1.Moderation/KickMember".
    public var path: String
    /// The call's timeout, relative to when the head arrived; nil for none.
    public var timeoutNanoseconds: UInt64?
    /// The acting user's uid; empty means the app itself.
    public var onBehalfOf: String
    public var idempotencyKey: String
    public var requestID: String
    /// The caller's own metadata.
    public var metadata: [String: String]
    /// Bytes the head took on the wire: what an open call holds of it, counted per connection
    /// and in the memory budget until the call ends.
    public var byteCount: Int

    public init(
        path: String, timeoutNanoseconds: UInt64? = nil, onBehalfOf: String = "", idempotencyKey: String = "",
        requestID: String = "", metadata: [String: String] = [:], byteCount: Int = 0
    ) {
        self.path = path
        self.timeoutNanoseconds = timeoutNanoseconds
        self.onBehalfOf = onBehalfOf
        self.idempotencyKey = idempotencyKey
        self.requestID = requestID
        self.metadata = metadata
        self.byteCount = byteCount
    }

    /// The metadata names that mean a field of the envelope, on every wire: on gRPC they are the
    /// request headers for those fields, and a client that sends them as metadata on our protocol
    /// (`rpc-probe -H 'x-on-behalf-of: u2'`) means the same. They never stay custom metadata.
    public static let fieldNames = (
        onBehalfOf: "x-on-behalf-of", idempotencyKey: "x-idempotency-key",
        requestID: "x-request-id"
    )

    /// The head with the envelope's fields taken from metadata that names them; throws
    /// INVALID_ARGUMENT when a field and its metadata disagree, so that a caller who asks to act
    /// as a user is never run as the app (or as another user) instead.
    public func normalized() throws(RPCError) -> CallHead {
        guard !metadata.isEmpty else { return self }
        var head = self
        try head.take(Self.fieldNames.onBehalfOf, into: \.onBehalfOf, field: "on_behalf_of")
        try head.take(Self.fieldNames.idempotencyKey, into: \.idempotencyKey, field: "idempotency_key")
        try head.take(Self.fieldNames.requestID, into: \.requestID, field: "request_id")
        return head
    }

    private mutating func take(
        _ name: String, into field: WritableKeyPath<CallHead, String>, field fieldName: String
    ) throws(RPCError) {
        // Metadata names are matched as HTTP matches header names: whatever their case.
        guard let key = metadata.keys.first(where: { $0 == name || $0.lowercased() == name }),
            let value = metadata.removeValue(forKey: key)
        else { return }
        let current = self[keyPath: field]
        guard current.isEmpty || current == value else {
            throw .invalidArgument(
                "the call's \(fieldName) is \"\(current)\" but its metadata \(name) is \"\(value)\": name it once")
        }
        self[keyPath: field] = value
    }
}
