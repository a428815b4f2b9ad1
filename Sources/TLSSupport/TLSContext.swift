internal import COpenSSL
internal import Glibc

/// One OpenSSL `SSL_CTX`: certificates, trust and policy, from which each connection's
/// `TLSSession` is made.
///
/// The policy is fixed here, the same for every listener and client: TLS 1.2 at least (1.3 when
/// the peer speaks it), forward-secret AEAD suites only for TLS 1.2 (OpenSSL's defaults for 1.3),
/// no renegotiation, no compression, no server-side session cache (TLS 1.3 resumes with
/// stateless tickets; a reload makes new keys for them), record buffers released while a
/// connection is idle.
///
/// Invariant: the `SSL_CTX` is not changed after `init` returns; OpenSSL then allows sessions to
/// be made from it on any thread, so the context is `Sendable`. Every `TLSSession` keeps its
/// context alive (the ALPN list the server's callback reads belongs to it).
public final class TLSContext: @unchecked Sendable {
    /// The ALPN name of the framed protocol (docs/PROTOCOL.md).
    public static let mrpcProtocol = "mrpc/1"
    /// HTTP/2's ALPN name, which gRPC clients offer and require.
    public static let http2Protocol = "h2"

    /// Which side of the handshake the sessions take.
    public enum Role: Sendable {
        case server
        case client
    }

    public let role: Role
    let context: OpaquePointer
    /// The server's ALPN list in the callback's format (total length first), owned here.
    private let alpnList: UnsafeMutableBufferPointer<UInt8>?
    /// For a client: whether the server's certificate is checked.
    let verifiesPeer: Bool
    /// For a client: the server name configured, if any.
    let serverName: String?
    /// The subject and expiry of the certificate this context presents, for logs.
    public let certificateSummary: String?

    /// TLS 1.2 suites: ECDHE key exchange (forward secrecy) with AES-GCM or ChaCha20-Poly1305.
    static let tls12Ciphers =
        "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384"
        + ":ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"

    /// A listener's context: its certificate chain and key, and the client CA for mutual TLS.
    /// - Throws: `TLSError` naming the file that does not load, or a key that does not match.
    public static func server(_ configuration: TLSServerConfiguration) throws(TLSError) -> TLSContext {
        guard let context = SSL_CTX_new(TLS_server_method()) else {
            throw TLSError.fromQueue("cannot create a TLS context")
        }
        do throws(TLSError) {
            try applyPolicy(context, minimumVersion: configuration.minimumVersion)
            try loadIdentity(
                context, certificate: configuration.certificateChainFile, key: configuration.privateKeyFile,
                settings: ("--tls-cert", "--tls-key"))
            if let clientCA = configuration.clientCAFile {
                guard SSL_CTX_load_verify_locations(context, clientCA, nil) == 1 else {
                    throw TLSError.fromQueue("cannot load the client CA certificates of --tls-client-ca \(clientCA)")
                }
                // The names sent in the CertificateRequest, so a client can pick its certificate.
                guard let names = SSL_load_client_CA_file(clientCA) else {
                    throw TLSError.fromQueue("cannot read the CA names of --tls-client-ca \(clientCA)")
                }
                SSL_CTX_set_client_CA_list(context, names)
                SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
            }
            // Needed for resumption whenever client certificates are verified; harmless otherwise.
            let sessionContext: [UInt8] = Array("mrpc".utf8)
            _ = SSL_CTX_set_session_id_context(context, sessionContext, UInt32(sessionContext.count))
            _ = cssl_ctx_set_session_cache_mode(context, Int(SSL_SESS_CACHE_OFF))
        } catch {
            SSL_CTX_free(context)
            throw error
        }
        let list = Self.alpnWireFormat(configuration.applicationProtocols)
        var alpn: UnsafeMutableBufferPointer<UInt8>?
        if !list.isEmpty {
            let owned = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: list.count + 1)
            owned[0] = UInt8(list.count)
            _ = UnsafeMutableBufferPointer(rebasing: owned[1...]).initialize(from: list)
            cssl_ctx_set_alpn_select(context, owned.baseAddress)
            alpn = owned
        }
        return TLSContext(
            role: .server, context: context, alpnList: alpn, verifiesPeer: configuration.clientCAFile != nil,
            serverName: nil)
    }

    /// A client's context: whom it trusts, and its own certificate for mutual TLS.
    /// - Throws: `TLSError` naming the file that does not load.
    public static func client(_ configuration: TLSClientConfiguration) throws(TLSError) -> TLSContext {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw TLSError.fromQueue("cannot create a TLS context")
        }
        do throws(TLSError) {
            try applyPolicy(context, minimumVersion: configuration.minimumVersion)
            if configuration.verifiesPeer {
                if let caFile = configuration.caFile {
                    guard SSL_CTX_load_verify_locations(context, caFile, nil) == 1 else {
                        throw TLSError.fromQueue("cannot load the CA certificates of --cacert \(caFile)")
                    }
                } else if SSL_CTX_set_default_verify_paths(context) != 1 {
                    throw TLSError.fromQueue("cannot load the system's CA certificates")
                }
                SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
            } else {
                SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
            }
            switch (configuration.certificateChainFile, configuration.privateKeyFile) {
            case (let certificate?, let key?):
                try loadIdentity(context, certificate: certificate, key: key, settings: ("--cert", "--key"))
            case (nil, nil):
                break
            default:
                throw TLSError("a client certificate needs both --cert and --key")
            }
            let list = Self.alpnWireFormat(configuration.applicationProtocols)
            if !list.isEmpty && SSL_CTX_set_alpn_protos(context, list, UInt32(list.count)) != 0 {
                throw TLSError.fromQueue("cannot set the ALPN protocols")
            }
        } catch {
            SSL_CTX_free(context)
            throw error
        }
        return TLSContext(
            role: .client, context: context, alpnList: nil, verifiesPeer: configuration.verifiesPeer,
            serverName: configuration.serverName)
    }

    private init(
        role: Role, context: OpaquePointer, alpnList: UnsafeMutableBufferPointer<UInt8>?, verifiesPeer: Bool,
        serverName: String?
    ) {
        self.role = role
        self.context = context
        self.alpnList = alpnList
        self.verifiesPeer = verifiesPeer
        self.serverName = serverName
        certificateSummary = Self.summary(of: SSL_CTX_get0_certificate(context))
    }

    deinit {
        SSL_CTX_free(context)
        alpnList?.deallocate()
    }

    /// A server session over the accepted socket `fd` (non-blocking), or nil when OpenSSL cannot
    /// make one (out of memory).
    public func makeServerSession(fd: Int32) -> TLSSession? {
        precondition(role == .server, "a client context makes client sessions")
        guard let session = TLSSession(context: self, fd: fd) else { return nil }
        SSL_set_accept_state(session.ssl)
        return session
    }

    /// A client session over the connected socket `fd`, checking the server's certificate against
    /// the configured server name or else `host`.
    /// - Throws: `TLSError` when the session cannot be made.
    public func makeClientSession(fd: Int32, host: String) throws(TLSError) -> TLSSession {
        precondition(role == .client, "a server context makes server sessions")
        guard let session = TLSSession(context: self, fd: fd) else {
            throw TLSError.fromQueue("cannot create a TLS session")
        }
        let name = serverName ?? host
        let isAddress = Self.isIPAddress(name)
        // SNI carries host names only, never addresses (RFC 6066).
        if !isAddress && !name.isEmpty { _ = cssl_set_tlsext_host_name(session.ssl, name) }
        if verifiesPeer && !name.isEmpty {
            let parameters = SSL_get0_param(session.ssl)
            let set = isAddress ? X509_VERIFY_PARAM_set1_ip_asc(parameters, name) : SSL_set1_host(session.ssl, name)
            guard set == 1 else { throw TLSError.fromQueue("cannot check the server's certificate for '\(name)'") }
        }
        SSL_set_connect_state(session.ssl)
        return session
    }

    // MARK: Setting up

    private static func applyPolicy(_ context: OpaquePointer, minimumVersion: TLSVersion) throws(TLSError) {
        guard cssl_ctx_set_min_proto_version(context, minimumVersion.openSSLValue) == 1,
            SSL_CTX_set_cipher_list(context, tls12Ciphers) == 1
        else {
            throw TLSError.fromQueue("cannot set the TLS versions and cipher suites")
        }
        _ = SSL_CTX_set_options(
            context, CSSL_OP_NO_RENEGOTIATION | CSSL_OP_CIPHER_SERVER_PREFERENCE | CSSL_OP_NO_COMPRESSION)
        // Partial writes and a buffer that may move between retries: the transport writes from a
        // growing array. Released buffers: an idle connection holds no record buffers.
        _ = cssl_ctx_set_mode(
            context,
            CSSL_MODE_ENABLE_PARTIAL_WRITE | CSSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | CSSL_MODE_RELEASE_BUFFERS)
        // One `recv` for what the socket holds rather than one per record header and body.
        cssl_ctx_set_read_ahead(context, 1)
    }

    private static func loadIdentity(
        _ context: OpaquePointer, certificate: String, key: String, settings: (certificate: String, key: String)
    ) throws(TLSError) {
        guard SSL_CTX_use_certificate_chain_file(context, certificate) == 1 else {
            throw TLSError.fromQueue("cannot load the certificate chain of \(settings.certificate) \(certificate)")
        }
        let mismatch = TLSError(
            "the private key of \(settings.key) \(key) does not belong to the certificate of "
                + "\(settings.certificate) \(certificate)")
        guard SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) == 1 else {
            let error = TLSError.fromQueue("cannot load the private key of \(settings.key) \(key)")
            throw error.message.contains("key values mismatch") ? mismatch : error
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            OpenSSLErrorQueue.drain()
            throw mismatch
        }
    }

    /// ALPN's wire format: each name as a length byte and its bytes (names of 1–255 bytes).
    private static func alpnWireFormat(_ protocols: [String]) -> [UInt8] {
        var list: [UInt8] = []
        for name in protocols where !name.isEmpty && name.utf8.count <= 255 {
            list.append(UInt8(name.utf8.count))
            list += name.utf8
        }
        return list.count <= 255 ? list : []
    }

    static func isIPAddress(_ name: String) -> Bool {
        var address = in6_addr()
        return name.contains(":") ? inet_pton(AF_INET6, name, &address) == 1 : inet_pton(AF_INET, name, &address) == 1
    }

    /// "subject …, expires …" of `certificate`.
    static func summary(of certificate: OpaquePointer?) -> String? {
        guard let certificate else { return nil }
        var parts: [String] = []
        if let subject = distinguishedName(X509_get_subject_name(certificate)) { parts.append("subject " + subject) }
        if let notAfter = X509_get0_notAfter(certificate), let text = MemoryBIO.text({ ASN1_TIME_print($0, notAfter) })
        {
            parts.append("expires " + text)
        }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    /// A name as RFC 2253 text ("CN=client,O=Example").
    static func distinguishedName(_ name: OpaquePointer?) -> String? {
        guard let name else { return nil }
        return MemoryBIO.text { X509_NAME_print_ex($0, name, 0, CSSL_XN_FLAG_RFC2253) >= 0 ? 1 : 0 }
    }
}

/// Text OpenSSL prints into a memory BIO.
enum MemoryBIO {
    static func text(_ print: (OpaquePointer) -> Int32) -> String? {
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        defer { BIO_free(bio) }
        guard print(bio) == 1 else {
            ERR_clear_error()
            return nil
        }
        var data: UnsafeMutablePointer<CChar>?
        let length = cssl_bio_get_mem_data(bio, &data)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }
}
