/// What a handler knows of its call: who calls, for whom, with which key, until when.
public final class CallContext: Sendable {
    /// The method path, e.g. "/moderation.v1.Moderation/KickMember".
    public let method: String
    /// The call's stream id on its connection.
    public let streamID: UInt32
    /// The app (tenant) the connection's API key belongs to.
    public let appID: String
    /// The acting user's uid; empty means the app itself.
    public let onBehalfOf: String
    /// The client's idempotency key, or empty.
    public let idempotencyKey: String
    /// The client's request id, or empty.
    public let requestID: String
    /// Custom metadata of the call.
    public let metadata: [String: String]
    /// Absolute deadline on the monotonic clock (nanoseconds), or nil for none.
    public let deadline: UInt64?
    /// The peer's address, for logs.
    public let peer: String
    /// When the call's request had been read from its connection, on the monotonic clock
    /// (`CLOCK_MONOTONIC`, nanoseconds), or nil when unknown. Whatever a client was told before
    /// it sent the call happened before this instant: a store that answers reads from a copy may
    /// use any copy checked against the database since then.
    public let receivedAt: UInt64?

    public init(
        method: String, streamID: UInt32, appID: String, onBehalfOf: String = "", idempotencyKey: String = "",
        requestID: String = "", metadata: [String: String] = [:], deadline: UInt64? = nil, peer: String = "",
        receivedAt: UInt64? = nil
    ) {
        self.method = method
        self.streamID = streamID
        self.appID = appID
        self.onBehalfOf = onBehalfOf
        self.idempotencyKey = idempotencyKey
        self.requestID = requestID
        self.metadata = metadata
        self.deadline = deadline
        self.peer = peer
        self.receivedAt = receivedAt
    }

    /// True when the deadline has passed at monotonic time `now`.
    public func isExpired(now: UInt64) -> Bool {
        guard let deadline else { return false }
        return now >= deadline
    }
}
