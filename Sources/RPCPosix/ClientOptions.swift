public import TLSSupport

/// Where and how a client connects.
public struct ClientOptions: Sendable {
    public var host = "127.0.0.1"
    public var port: UInt16 = 7600
    /// The API key: bare or "APP_ID:KEY".
    public var apiKey = ""
    /// When set, the key must belong to this app.
    public var appID = ""
    public var clientName = "mrpc-swift"
    public var connectTimeoutMs = 5_000
    /// Accept deflate-compressed bodies from the server.
    public var acceptDeflate = true
    /// Largest body the client accepts (after inflation).
    public var maxMessageBytes = 4 * 1024 * 1024
    /// TLS: whom to trust, what to present, which name to check; nil speaks plaintext.
    public var tls: TLSClientConfiguration?

    public init(host: String = "127.0.0.1", port: UInt16 = 7600, apiKey: String = "") {
        self.host = host
        self.port = port
        self.apiKey = apiKey
    }
}

/// Per-call settings: the CallHeader fields a client chooses.
public struct CallOptions: Sendable {
    /// Relative deadline in milliseconds; 0 means none. The client enforces it too.
    public var timeoutMs: UInt32 = 0
    /// The acting user's uid; empty means the app.
    public var onBehalfOf = ""
    public var idempotencyKey = ""
    public var requestID = ""
    public var metadata: [String: String] = [:]
    /// Ask for a deflate-compressed response or stream.
    public var acceptDeflate = false
    /// Deflate the request body.
    public var compressRequest = false

    public init(
        timeoutMs: UInt32 = 0, onBehalfOf: String = "", idempotencyKey: String = "", requestID: String = "",
        metadata: [String: String] = [:], acceptDeflate: Bool = false, compressRequest: Bool = false
    ) {
        self.timeoutMs = timeoutMs
        self.onBehalfOf = onBehalfOf
        self.idempotencyKey = idempotencyKey
        self.requestID = requestID
        self.metadata = metadata
        self.acceptDeflate = acceptDeflate
        self.compressRequest = compressRequest
    }
}

extension ClientOptions {
    /// The largest frame the client reads: a body at `maxMessageBytes` plus room for its status.
    var frameLimit: Int { maxMessageBytes + 64 * 1024 }
}
