internal import COpenSSL

/// The oldest TLS version a context accepts. TLS 1.2 is the floor: SSL 3.0, TLS 1.0 and 1.1 are
/// never offered. TLS 1.3 is preferred whenever both sides speak it (OpenSSL negotiates the
/// highest common version).
public enum TLSVersion: Sendable, Equatable, CaseIterable {
    case tls12
    case tls13

    var openSSLValue: Int32 {
        switch self {
        case .tls12: TLS1_2_VERSION
        case .tls13: TLS1_3_VERSION
        }
    }
}
