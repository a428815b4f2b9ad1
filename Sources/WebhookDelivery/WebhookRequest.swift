/// One webhook POST: where, the body, and the three Standard Webhooks headers' values.
public struct WebhookRequest: Sendable {
    public let url: String
    /// `webhook-id`: the same for every retry of one batch, so the receiver can drop duplicates.
    public let messageID: String
    /// `webhook-timestamp`: Unix seconds of this attempt.
    public let timestamp: Int64
    public let body: [UInt8]
    /// `webhook-signature`.
    public let signature: String

    public init(url: String, messageID: String, timestamp: Int64, body: [UInt8], signature: String) {
        self.url = url
        self.messageID = messageID
        self.timestamp = timestamp
        self.body = body
        self.signature = signature
    }

    /// A request signed with `secret` (a fresh signature for each attempt's timestamp).
    public init(url: String, messageID: String, timestamp: Int64, body: [UInt8], secret: WebhookSecret) {
        self.init(
            url: url, messageID: messageID, timestamp: timestamp, body: body,
            signature: WebhookSignature.sign(secret: secret, messageID: messageID, timestamp: timestamp, body: body))
    }
}

/// A receiver's `Retry-After`: a delay in seconds or an HTTP date.
public enum RetryAfter: Sendable, Equatable {
    case seconds(Int64)
    case date(unixSeconds: Int64)

    /// Seconds to wait from `now` (Unix seconds); never negative.
    public func delay(now: Int64) -> Int64 {
        switch self {
        case .seconds(let seconds): max(0, seconds)
        case .date(let unixSeconds): max(0, unixSeconds - now)
        }
    }
}

/// The HTTP answer to a webhook request (any status: deciding what it means is the caller's).
public struct WebhookResponse: Sendable, Equatable {
    public let status: Int
    /// Present when the answer carried a `Retry-After` that reads as seconds or an HTTP date.
    public let retryAfter: RetryAfter?
    /// The HTTP version the answer came in (`1.1`, `2`), for TestWebhook's report and diagnostics.
    public let httpVersion: String

    public init(status: Int, retryAfter: RetryAfter?, httpVersion: String = "1.1") {
        self.status = status
        self.retryAfter = retryAfter
        self.httpVersion = httpVersion
    }
}

/// How one submitted request ended.
public struct WebhookCompletion: Sendable {
    /// The number `submit` returned for the request.
    public let submission: UInt64
    /// The key it was submitted under (the webhook's id).
    public let key: String
    public let result: Result<WebhookResponse, WebhookDeliveryError>
    /// From the moment the request started on the wire (after any wait behind its key) to its end.
    public let elapsed: Duration
}
