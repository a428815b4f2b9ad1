/// What a TLS listener presents and asks for: its certificate chain and key (PEM files), and,
/// for mutual TLS, the CA whose certificates clients must present.
///
/// Paths rather than contents, so a reload (SIGHUP) reads the files again.
public struct TLSServerConfiguration: Sendable, Equatable {
    /// The server's certificate, then any intermediates (PEM).
    public var certificateChainFile: String
    /// The private key of that certificate (PEM, unencrypted).
    public var privateKeyFile: String
    /// When set, every client must present a certificate issued by a CA in this file (PEM):
    /// mutual TLS. A client without one is refused in the handshake.
    public var clientCAFile: String?
    /// The ALPN protocols the listener speaks, preferred first. A client that offers ALPN must
    /// offer one of them; a client that offers none is served all the same.
    public var applicationProtocols: [String]
    public var minimumVersion: TLSVersion

    public init(
        certificateChainFile: String, privateKeyFile: String, clientCAFile: String? = nil,
        applicationProtocols: [String] = [TLSContext.mrpcProtocol], minimumVersion: TLSVersion = .tls12
    ) {
        self.certificateChainFile = certificateChainFile
        self.privateKeyFile = privateKeyFile
        self.clientCAFile = clientCAFile
        self.applicationProtocols = applicationProtocols
        self.minimumVersion = minimumVersion
    }
}
