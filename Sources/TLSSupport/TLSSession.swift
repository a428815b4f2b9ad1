internal import COpenSSL
internal import Glibc

/// One TLS connection over a socket the caller owns: the handshake, then reads and writes that
/// never block (the socket is non-blocking, or the caller polls).
///
/// OpenSSL reads and writes the socket itself, through a BIO that sends with `MSG_NOSIGNAL`;
/// each call reports what it needs to go on: `.wantRead` (wait for the socket to be readable),
/// `.wantWrite` (writable) — either may come from either call, since TLS writes records while
/// reading (handshake messages, alerts) and could read while writing. OpenSSL holds at most one
/// record being read and one being written (about 17 KiB each, released when the connection is
/// idle), plus the session's own state.
///
/// Invariant: used by one thread at a time: the server's connection on its loop; a client
/// serialises its reader thread and its writers with one lock. (OpenSSL forbids concurrent
/// calls on one session.)
public final class TLSSession: @unchecked Sendable {
    /// What a TLS handshake under way makes the server hold (OpenSSL's handshake state and its
    /// buffers, about 44 KiB measured), counted in the memory budget until it completes: a flood of
    /// handshakes that never finish cannot hold more than the budget allows.
    public static let handshakeBytes = 48 * 1024

    /// What a read or a write did.
    public enum IOResult: Equatable, Sendable {
        /// This many bytes were read or written (more than zero).
        case bytes(Int)
        /// Nothing until the socket is readable.
        case wantRead
        /// Nothing until the socket is writable.
        case wantWrite
        /// The peer ended the connection (close_notify, or the socket's end).
        case closed
        /// TLS failed; `failure` says why.
        case failed
    }

    /// What a handshake step did.
    public enum HandshakeStep: Equatable, Sendable {
        case complete
        case wantRead
        case wantWrite
        case failed(TLSError)
    }

    let ssl: OpaquePointer
    private let context: TLSContext
    /// Why the last read or write failed.
    public private(set) var failure: TLSError?
    /// True once the handshake completed.
    public private(set) var isEstablished = false

    init?(context: TLSContext, fd: Int32) {
        guard let ssl = SSL_new(context.context) else { return nil }
        guard let method = SocketBIO.method, let bio = cssl_socket_bio_new(method, fd) else {
            SSL_free(ssl)
            return nil
        }
        SSL_set_bio(ssl, bio, bio) // the session owns the BIO now
        self.ssl = ssl
        self.context = context
    }

    deinit { SSL_free(ssl) }

    /// Advances the handshake as far as the socket allows.
    public func handshake() -> HandshakeStep {
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            isEstablished = true
            return .complete
        }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ: return .wantRead
        case SSL_ERROR_WANT_WRITE: return .wantWrite
        default: return .failed(handshakeFailure())
        }
    }

    /// Reads decrypted bytes into `buffer`; at most one record's worth (16 KiB) per call.
    @inline(__always)
    public func read(into buffer: UnsafeMutableRawPointer, count: Int) -> IOResult {
        let n = SSL_read(ssl, buffer, Int32(clamping: count))
        return n > 0 ? .bytes(Int(n)) : outcome(n, "TLS read failed")
    }

    /// Encrypts and writes bytes from `buffer`, one record at a time; after `.wantWrite` or
    /// `.wantRead`, the next write must offer the same bytes again (it may offer more after them).
    @inline(__always)
    public func write(from buffer: UnsafeRawPointer, count: Int) -> IOResult {
        let n = SSL_write(ssl, buffer, Int32(clamping: count))
        return n > 0 ? .bytes(Int(n)) : outcome(n, "TLS write failed")
    }

    /// True when OpenSSL holds bytes already received that a read would return without the
    /// socket: a caller that waits for the socket before reading again would wait in vain.
    public var hasBufferedInput: Bool { SSL_has_pending(ssl) == 1 }

    /// Sends close_notify once (without waiting for the peer's), when the handshake completed.
    public func shutdown() {
        guard isEstablished else { return }
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
    }

    /// Bytes received from the socket so far (a peer that closes having sent none is no TLS
    /// failure worth a log line: a port scan, a health check's TCP connect).
    public var bytesReceived: UInt64 { UInt64(BIO_number_read(SSL_get_rbio(ssl))) }

    // MARK: What was negotiated

    /// "TLSv1.3", "TLSv1.2".
    public var protocolVersion: String { String(cString: SSL_get_version(ssl)) }

    public var cipherSuite: String {
        guard let cipher = SSL_get_current_cipher(ssl) else { return "" }
        return String(cString: SSL_CIPHER_get_name(cipher))
    }

    /// The ALPN protocol both sides chose, nil when the client offered none.
    public var applicationProtocol: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// The subject of the peer's certificate (RFC 2253), nil when it presented none.
    public var peerSubject: String? {
        guard let certificate = SSL_get1_peer_certificate(ssl) else { return nil }
        defer { X509_free(certificate) }
        return TLSContext.distinguishedName(X509_get_subject_name(certificate))
    }

    // MARK: Errors

    private func outcome(_ result: Int32, _ what: String) -> IOResult {
        let code = SSL_get_error(ssl, result)
        switch code {
        case SSL_ERROR_WANT_READ: return .wantRead
        case SSL_ERROR_WANT_WRITE: return .wantWrite
        case SSL_ERROR_ZERO_RETURN: return .closed
        case SSL_ERROR_SYSCALL:
            let reasons = OpenSSLErrorQueue.drain()
            // End of file without close_notify, or a reset: the peer has gone.
            if reasons.isEmpty { return .closed }
            failure = TLSError(what + ": " + reasons.joined(separator: "; "))
            return .failed
        default:
            let error = TLSError.fromQueue(what)
            if error.message.contains("unexpected eof") { return .closed }
            failure = error
            return .failed
        }
    }

    private func handshakeFailure() -> TLSError {
        let verify = SSL_get_verify_result(ssl)
        let error = TLSError.fromQueue("TLS handshake failed", verifyResult: verify)
        if error.message == "TLS handshake failed" {
            let reason =
                errno == 0 || bytesReceived == 0 ? "the peer closed the connection" : String(cString: strerror(errno))
            return TLSError("TLS handshake failed: " + reason)
        }
        return error
    }
}

/// The process's one socket BIO method (`cssl_socket_bio_method`), made on first use.
enum SocketBIO {
    nonisolated(unsafe) static let method: OpaquePointer? = cssl_socket_bio_method()
}
