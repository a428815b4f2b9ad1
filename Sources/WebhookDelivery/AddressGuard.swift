internal import CCurl
internal import Glibc

/// Which addresses a webhook may reach: the SSRF guard.
///
/// A webhook URL is chosen by an app, but the request leaves from inside the operator's network,
/// so an address that names that network (loopback, RFC 1918, link-local, CGNAT, unique local
/// IPv6) or the cloud's metadata service must not be reachable through it. The check is made on
/// the address a socket is about to connect to (the client's open-socket callback), not on the
/// name: a name that resolved to a public address when the webhook was created can resolve to
/// 127.0.0.1 at the next connect (DNS rebinding). `check(url:)` resolves ahead of time for a
/// clear answer when a webhook is created or updated.
public struct AddressGuard: Sendable {
    /// Why an address is refused.
    public enum Refusal: String, Sendable, Equatable {
        case loopback
        case privateNetwork = "private network"
        case linkLocal = "link-local"
        case unspecified
        case multicast
        case sharedAddressSpace = "shared address space (CGNAT)"
        case metadata = "cloud metadata service"
        case reserved
        /// Only http and https are delivered to; http only where private addresses are allowed.
        case scheme = "scheme not allowed"
        case unresolved = "host does not resolve"
        case malformed = "not a URL"
    }

    /// `--webhook-allow-private`: loopback, private, link-local and shared addresses, and plain
    /// http, become allowed (for tests and receivers on the same network). The metadata service,
    /// unspecified, multicast and reserved addresses stay refused: nothing legitimate answers a
    /// webhook there.
    public let allowsPrivateAddresses: Bool

    public init(allowsPrivateAddresses: Bool) {
        self.allowsPrivateAddresses = allowsPrivateAddresses
    }

    /// Why `address` (4 bytes for IPv4, 16 for IPv6, network order) is refused, or nil.
    public func refusal(of address: [UInt8]) -> Refusal? {
        guard let kind = Self.classify(address) else { return nil }
        switch kind {
        case .loopback, .privateNetwork, .linkLocal, .sharedAddressSpace:
            return allowsPrivateAddresses ? nil : kind
        default:
            return kind
        }
    }

    /// Whether `scheme` (lower case) may be delivered to.
    public func allows(scheme: String) -> Bool {
        scheme == "https" || (scheme == "http" && allowsPrivateAddresses)
    }

    /// Checks a webhook URL now: its scheme, then every address its host resolves to (one
    /// refused address refuses the URL: a name that sometimes answers 10.0.0.1 is not public).
    ///
    /// Blocking (getaddrinfo): for the RPC that creates or updates a webhook, never the delivery
    /// thread, whose connects are checked again address by address anyway.
    /// - Returns: nil when the URL may be delivered to, else why not and the address refused.
    public func check(url: String) -> (refusal: Refusal, address: String?)? {
        guard let parts = Self.schemeAndHost(of: url) else { return (.malformed, nil) }
        guard allows(scheme: parts.scheme) else { return (.scheme, nil) }
        let addresses = Self.resolve(host: parts.host)
        if addresses.isEmpty { return (.unresolved, nil) }
        for address in addresses {
            if let refusal = refusal(of: address) { return (refusal, Self.text(of: address)) }
        }
        return nil
    }

    // MARK: Classification

    static func classify(_ address: [UInt8]) -> Refusal? {
        switch address.count {
        case 4: return classifyIPv4(address[0], address[1], address[2], address[3])
        case 16: return classifyIPv6(address)
        default: return .malformed
        }
    }

    private static func classifyIPv4(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) -> Refusal? {
        if a == 169, b == 254, c == 169, d == 254 { return .metadata }
        switch a {
        case 0: return .unspecified // "this network"; 0.0.0.0 connects to the local host on Linux
        case 127: return .loopback
        case 10: return .privateNetwork
        case 172 where (16...31).contains(b): return .privateNetwork
        case 192 where b == 168: return .privateNetwork
        case 169 where b == 254: return .linkLocal
        case 100 where (64...127).contains(b): return .sharedAddressSpace
        case 224...239: return .multicast
        case 240...255: return .reserved // 240/4 and the broadcast address
        default: return nil
        }
    }

    private static func classifyIPv6(_ bytes: [UInt8]) -> Refusal? {
        let firstTen = bytes[0..<10].allSatisfy { $0 == 0 }
        // IPv4-mapped (::ffff:a.b.c.d) and the deprecated IPv4-compatible (::a.b.c.d): a socket
        // connected to them reaches the IPv4 address.
        if firstTen, bytes[10] == 0xff, bytes[11] == 0xff {
            return classifyIPv4(bytes[12], bytes[13], bytes[14], bytes[15])
        }
        if firstTen, bytes[10] == 0, bytes[11] == 0 {
            if bytes[12..<15].allSatisfy({ $0 == 0 }) {
                if bytes[15] == 0 { return .unspecified }
                if bytes[15] == 1 { return .loopback }
            }
            return classifyIPv4(bytes[12], bytes[13], bytes[14], bytes[15])
        }
        // fd00:ec2::254, AWS's IPv6 metadata service (inside fc00::/7, named first for its reason).
        let metadata: [UInt8] = [0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54]
        if bytes == metadata { return .metadata }
        if bytes[0] & 0xfe == 0xfc { return .privateNetwork } // unique local fc00::/7
        if bytes[0] == 0xfe, bytes[1] & 0xc0 == 0x80 { return .linkLocal } // fe80::/10
        if bytes[0] == 0xfe, bytes[1] & 0xc0 == 0xc0 { return .privateNetwork } // site-local fec0::/10
        if bytes[0] == 0xff { return .multicast }
        return nil
    }

    // MARK: Resolution

    /// The scheme (lower case) and host of `url`, by curl's own parser (the one the transfer uses).
    static func schemeAndHost(of url: String) -> (scheme: String, host: String)? {
        guard let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        guard curl_url_set(handle, CURLUPART_URL, url, 0) == CURLUE_OK else { return nil }
        func part(_ which: CURLUPart) -> String? {
            var value: UnsafeMutablePointer<CChar>?
            guard curl_url_get(handle, which, &value, 0) == CURLUE_OK, let value else { return nil }
            defer { curl_free(value) }
            return String(cString: value)
        }
        guard let scheme = part(CURLUPART_SCHEME), var host = part(CURLUPART_HOST) else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (scheme.lowercased(), host)
    }

    /// Every IPv4 and IPv6 address `host` resolves to (or is), as bytes.
    static func resolve(host: String) -> [[UInt8]] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0 else { return [] }
        defer { freeaddrinfo(list) }
        var addresses: [[UInt8]] = []
        var entry = list
        while let info = entry {
            if let address = bytes(of: UnsafeRawPointer(info.pointee.ai_addr)) { addresses.append(address) }
            entry = info.pointee.ai_next
        }
        return addresses
    }

    /// The address bytes of a `sockaddr_in` or `sockaddr_in6`, nil for another family.
    static func bytes(of socketAddress: UnsafeRawPointer?) -> [UInt8]? {
        guard let socketAddress else { return nil }
        switch Int32(socketAddress.load(as: sockaddr.self).sa_family) {
        case AF_INET:
            var address = socketAddress.loadUnaligned(as: sockaddr_in.self).sin_addr
            return withUnsafeBytes(of: &address) { Array($0) }
        case AF_INET6:
            var address = socketAddress.loadUnaligned(as: sockaddr_in6.self).sin6_addr
            return withUnsafeBytes(of: &address) { Array($0) }
        default:
            return nil
        }
    }

    /// An address as text (`10.0.0.1`, `::1`), for errors.
    public static func text(of address: [UInt8]) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = address.count == 4 ? AF_INET : AF_INET6
        let written = address.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        guard written != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
