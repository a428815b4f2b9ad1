/// How the delivery client connects: timeouts, trust, and the SSRF guard's policy.
public struct WebhookClientConfiguration: Sendable {
    /// TCP and TLS connect (the contract's 5 s).
    public var connectTimeout: Duration = .seconds(5)
    /// The whole request, connect included (the contract's 15 s).
    public var requestTimeout: Duration = .seconds(15)
    /// `--webhook-allow-private`: see `AddressGuard`.
    public var allowsPrivateAddresses = false
    /// A PEM file of CAs trusted in addition to the system's (a receiver under a private CA).
    public var extraCAFile: String?
    /// The response body is read and dropped; past this many bytes the transfer is cut (the
    /// status already received still counts).
    public var responseBodyLimit = 64 * 1024
    /// Idle connections kept for reuse, across all endpoints.
    public var cachedConnections = 64
    public var userAgent = "moderation-webhooks/1"

    public init() {}
}
