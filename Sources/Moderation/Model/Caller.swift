/// Who is calling: the app (tenant) of the API key and, optionally, the user it acts for.
///
/// `actor == nil` means the app itself (an empty `on_behalf_of`). The idempotency key and request
/// id are copied into every action the call records.
public struct Caller: Sendable, Equatable {
    /// The app (tenant) of the connection's API key; all data is partitioned by it.
    public var app: String
    /// The acting user's uid, or nil for the app itself.
    public var actor: String?
    /// Makes a mutation safe to retry (same app, same actor, within 24 h); empty for none.
    public var idempotencyKey: String
    /// The client's request id, recorded with the actions the call causes; may be empty.
    public var requestID: String
    /// When the call arrived (`CLOCK_MONOTONIC` nanoseconds), or nil for now: its reads must show
    /// every write acknowledged before then (see `ModerationStore.read(arrivedAt:_:)`).
    public var receivedAt: UInt64?

    public init(
        app: String, actor: String? = nil, idempotencyKey: String = "", requestID: String = "",
        receivedAt: UInt64? = nil
    ) {
        self.app = app
        self.actor = actor
        self.idempotencyKey = idempotencyKey
        self.requestID = requestID
        self.receivedAt = receivedAt
    }
}
