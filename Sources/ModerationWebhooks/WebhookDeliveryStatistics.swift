public import Moderation

/// One webhook as this server delivers it, for `/metrics`.
public struct WebhookDeliveryStatistics: Sendable, Equatable {
    public var app: String
    public var id: String
    public var state: WebhookState
    /// Whether this server holds the webhook's lease (delivers it now).
    public var leased = false
    /// Requests answered 2xx.
    public var delivered: UInt64 = 0
    /// Requests answered otherwise, or not at all.
    public var failed: UInt64 = 0
    /// Actions in the requests answered 2xx.
    public var actionsDelivered: UInt64 = 0
    /// The app's last seq this server knows of, less the webhook's cursor.
    public var lagSeqs: UInt64 = 0
    /// Unix milliseconds of the oldest action not delivered yet; 0 when caught up.
    public var oldestUndeliveredAt: Int64 = 0
}
