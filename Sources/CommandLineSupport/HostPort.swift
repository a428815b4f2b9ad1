/// A host and a port, as `--listen` and rpc-probe's address give them.
public struct HostPort: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// A name or an address; an IPv6 address without brackets ("::1").
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// "HOST:PORT", with an IPv6 address in brackets ("[::1]:7600").
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
