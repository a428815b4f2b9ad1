public import TLSSupport

/// `--tls-cert`, `--tls-key` and `--tls-client-ca`: the listener speaks TLS only when a
/// certificate and its key are given (both, or neither); the client CA asks every client for a
/// certificate (mutual TLS). Files, read at start and again on SIGHUP.
public struct TLSSettings: Sendable, Equatable {
    public var certificateFile: String?
    public var keyFile: String?
    public var clientCAFile: String?

    public init(certificateFile: String? = nil, keyFile: String? = nil, clientCAFile: String? = nil) {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.clientCAFile = clientCAFile
    }

    /// The listener's configuration.
    /// - Throws: `ConfigurationError` when a certificate comes without its key (or the other way
    ///   round), or a client CA without either.
    public func configuration() throws(ConfigurationError) -> TLSServerConfiguration {
        guard let certificateFile, let keyFile else {
            if certificateFile != nil { throw ConfigurationError("--tls-cert needs --tls-key (the certificate's key)") }
            if keyFile != nil { throw ConfigurationError("--tls-key needs --tls-cert (the key's certificate)") }
            throw ConfigurationError("--tls-client-ca needs --tls-cert and --tls-key (the server's own certificate)")
        }
        // Both wires on every port: ALPN names ours or HTTP/2 (stock gRPC clients require h2).
        return TLSServerConfiguration(
            certificateChainFile: certificateFile, privateKeyFile: keyFile, clientCAFile: clientCAFile,
            applicationProtocols: [TLSContext.mrpcProtocol, TLSContext.http2Protocol])
    }
}
