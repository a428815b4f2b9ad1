/// How a client speaks TLS: whom it trusts, what it presents, which name it checks.
public struct TLSClientConfiguration: Sendable, Hashable {
    /// CA certificates (PEM) the server's chain must lead to; nil trusts the system's store.
    public var caFile: String?
    /// A client certificate chain and its key (PEM), for a server that asks for one (mutual TLS).
    public var certificateChainFile: String?
    public var privateKeyFile: String?
    /// The name the server's certificate must carry (and the SNI sent); nil uses the host
    /// connected to. An IP address is checked against the certificate's IP addresses.
    public var serverName: String?
    /// False skips every check of the server's certificate: for tests only (anyone on the path
    /// can then read and change the traffic, API key included).
    public var verifiesPeer: Bool
    /// The ALPN protocols offered, preferred first.
    public var applicationProtocols: [String]
    public var minimumVersion: TLSVersion

    public init(
        caFile: String? = nil, certificateChainFile: String? = nil, privateKeyFile: String? = nil,
        serverName: String? = nil, verifiesPeer: Bool = true,
        applicationProtocols: [String] = [TLSContext.mrpcProtocol], minimumVersion: TLSVersion = .tls12
    ) {
        self.caFile = caFile
        self.certificateChainFile = certificateChainFile
        self.privateKeyFile = privateKeyFile
        self.serverName = serverName
        self.verifiesPeer = verifiesPeer
        self.applicationProtocols = applicationProtocols
        self.minimumVersion = minimumVersion
    }
}
