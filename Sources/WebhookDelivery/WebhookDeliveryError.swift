/// Why a webhook request got no HTTP answer: curl's failure, or the SSRF guard's refusal.
///
/// The message is curl's own (from its error buffer) or the guard's reason, meant for the
/// webhook's `last_error`, which the app reads.
public struct WebhookDeliveryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure, for the retry decision and for tests; can grow without breaking callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String {
            case invalidURL = "invalid URL"
            case addressRefused = "address refused"
            case unresolved = "host not resolved"
            case connectFailed = "connect failed"
            case timedOut = "timed out"
            case tls = "TLS failure"
            case protocolError = "HTTP failure"
            case cancelled
            case other
        }
        private let value: Value

        /// Curl could not read the URL, or its scheme is not one the guard allows.
        public static let invalidURL = Code(value: .invalidURL)
        /// The SSRF guard refused every address the host resolved to.
        public static let addressRefused = Code(value: .addressRefused)
        public static let unresolved = Code(value: .unresolved)
        /// TCP connect refused or unreachable.
        public static let connectFailed = Code(value: .connectFailed)
        /// The connect timeout or the whole request's timeout passed.
        public static let timedOut = Code(value: .timedOut)
        /// The handshake failed or the certificate did not verify.
        public static let tls = Code(value: .tls)
        /// The connection broke or the answer was not HTTP.
        public static let protocolError = Code(value: .protocolError)
        /// The client shut down before the request completed.
        public static let cancelled = Code(value: .cancelled)
        public static let other = Code(value: .other)

        public var description: String { value.rawValue }
    }

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
