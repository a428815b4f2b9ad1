/// Addresses.
extension ArgumentValue {
    /// "HOST:PORT", or "[HOST]:PORT" for an IPv6 address; an unbracketed host may hold colons
    /// itself ("::1:7600": the port follows the last one).
    /// - Parameters:
    ///   - ports: the ports accepted (a server may listen on 0, an ephemeral port; a client needs
    ///     a real one).
    ///   - defaultHost: the host when the text gives none (":7600"); nil refuses an empty host.
    public func hostPort(ports: ClosedRange<UInt16> = 0...UInt16.max, defaultHost: String? = nil) throws(ArgumentError)
        -> HostPort
    {
        var host: Substring
        var portText: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw error("'\(text)' is not [HOST]:PORT") }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw error("'\(text)' is not HOST:PORT") }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        if host.isEmpty {
            guard let defaultHost else { throw error("the host is empty in '\(text)'") }
            host = defaultHost[...]
        }
        guard let port = UInt16(portText), ports.contains(port) else {
            throw error("'\(portText)' in '\(text)' is not a port (\(ports.lowerBound)–\(ports.upperBound))")
        }
        return HostPort(host: String(host), port: port)
    }
}
