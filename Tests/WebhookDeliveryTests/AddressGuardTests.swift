import Glibc
import Testing
import WebhookDelivery

/// The SSRF guard's table: each address class, with and without `--webhook-allow-private`.
@Suite("AddressGuard")
struct AddressGuardTests {
    private static func bytes(_ text: String) -> [UInt8] {
        if text.contains(":") {
            var address = in6_addr()
            precondition(inet_pton(AF_INET6, text, &address) == 1, text)
            return withUnsafeBytes(of: &address) { Array($0) }
        }
        var address = in_addr()
        precondition(inet_pton(AF_INET, text, &address) == 1, text)
        return withUnsafeBytes(of: &address) { Array($0) }
    }

    /// (address, refusal without the flag, refusal with it)
    static let table: [(String, AddressGuard.Refusal?, AddressGuard.Refusal?)] = [
        ("93.184.215.14", nil, nil),
        ("8.8.8.8", nil, nil),
        ("2606:4700:4700::1111", nil, nil),
        ("127.0.0.1", .loopback, nil),
        ("127.255.0.9", .loopback, nil),
        ("::1", .loopback, nil),
        ("10.1.2.3", .privateNetwork, nil),
        ("172.16.0.1", .privateNetwork, nil),
        ("172.31.255.255", .privateNetwork, nil),
        ("172.32.0.1", nil, nil),
        ("192.168.1.1", .privateNetwork, nil),
        ("fc00::1", .privateNetwork, nil),
        ("fd12:3456::1", .privateNetwork, nil),
        ("169.254.10.1", .linkLocal, nil),
        ("fe80::1", .linkLocal, nil),
        ("100.64.0.1", .sharedAddressSpace, nil),
        ("100.127.255.254", .sharedAddressSpace, nil),
        ("100.128.0.1", nil, nil),
        ("169.254.169.254", .metadata, .metadata),
        ("fd00:ec2::254", .metadata, .metadata),
        ("0.0.0.0", .unspecified, .unspecified),
        ("0.1.2.3", .unspecified, .unspecified),
        ("::", .unspecified, .unspecified),
        ("224.0.0.1", .multicast, .multicast),
        ("ff02::1", .multicast, .multicast),
        ("255.255.255.255", .reserved, .reserved),
        ("240.0.0.1", .reserved, .reserved),
        // IPv4-mapped IPv6 reaches the IPv4 address: classified as it.
        ("::ffff:127.0.0.1", .loopback, nil),
        ("::ffff:169.254.169.254", .metadata, .metadata),
        ("::ffff:10.0.0.1", .privateNetwork, nil),
        ("::ffff:8.8.8.8", nil, nil),
    ]

    @Test("Address classes", arguments: table)
    func classifies(address: String, strict: AddressGuard.Refusal?, permissive: AddressGuard.Refusal?) {
        #expect(AddressGuard(allowsPrivateAddresses: false).refusal(of: Self.bytes(address)) == strict)
        #expect(AddressGuard(allowsPrivateAddresses: true).refusal(of: Self.bytes(address)) == permissive)
    }

    @Test("URLs checked ahead of delivery: scheme, then every resolved address")
    func urls() {
        let strict = AddressGuard(allowsPrivateAddresses: false)
        let permissive = AddressGuard(allowsPrivateAddresses: true)
        #expect(strict.check(url: "https://127.0.0.1:8443/hook")?.refusal == .loopback)
        #expect(strict.check(url: "https://127.0.0.1:8443/hook")?.address == "127.0.0.1")
        #expect(strict.check(url: "https://[::1]/hook")?.refusal == .loopback)
        #expect(strict.check(url: "https://localhost/hook")?.refusal == .loopback)
        #expect(strict.check(url: "https://10.0.0.7/hook")?.refusal == .privateNetwork)
        #expect(strict.check(url: "http://93.184.215.14/hook")?.refusal == .scheme)
        #expect(strict.check(url: "ftp://93.184.215.14/hook")?.refusal == .scheme)
        #expect(strict.check(url: "https://93.184.215.14/hook") == nil)
        #expect(strict.check(url: "not a url")?.refusal == .malformed)
        #expect(permissive.check(url: "http://127.0.0.1:8080/hook") == nil)
        #expect(permissive.check(url: "https://169.254.169.254/latest/meta-data")?.refusal == .metadata)
        #expect(permissive.check(url: "gopher://127.0.0.1/")?.refusal == .scheme)
        #expect(strict.check(url: "https://name.invalid/hook")?.refusal == .unresolved)
    }

    @Test("Addresses as text")
    func text() {
        #expect(AddressGuard.text(of: Self.bytes("10.0.0.1")) == "10.0.0.1")
        #expect(AddressGuard.text(of: Self.bytes("fd00:ec2::254")) == "fd00:ec2::254")
    }
}
