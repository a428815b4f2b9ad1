/// Sends `TestWebhook`'s one `ping` request: the server's webhook delivery, seen by the RPC
/// layer without knowing HTTP.
public protocol WebhookPinger: Sendable {
    /// Posts a signed `ping` to `webhook`'s URL now (not behind its queued deliveries) and
    /// reports how it went, on any thread.
    func ping(_ webhook: StoredWebhook, completion: @escaping @Sendable (WebhookPingResult) -> Void)
}

/// How a `ping` went: the receiver's HTTP status and the time it took, or why there was no answer.
public struct WebhookPingResult: Sendable, Equatable {
    /// 0 when there was no HTTP answer (`error` says why).
    public var httpStatus: Int
    public var latencyMs: Int64
    /// Empty when the receiver answered (whatever the status).
    public var error: String
    /// `1.1` or `2`; empty without an answer.
    public var httpVersion: String

    public init(httpStatus: Int, latencyMs: Int64, error: String = "", httpVersion: String = "") {
        self.httpStatus = httpStatus
        self.latencyMs = latencyMs
        self.error = error
        self.httpVersion = httpVersion
    }
}
