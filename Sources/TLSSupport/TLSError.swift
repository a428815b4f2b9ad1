internal import COpenSSL

/// Why TLS could not be set up (a certificate or key that does not load) or a handshake failed.
///
/// The message is for an operator or a user: what was being done, then OpenSSL's reasons
/// ("certificate verify failed: unable to get local issuer certificate"), never a bare code.
public struct TLSError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }

    /// `what`, then the reasons on the calling thread's OpenSSL error queue, which is left empty
    /// (OpenSSL's next I/O call on this thread needs it empty to report its own result).
    static func fromQueue(_ what: String, verifyResult: Int = Int(X509_V_OK)) -> TLSError {
        var reasons = OpenSSLErrorQueue.drain()
        if verifyResult != Int(X509_V_OK) {
            let text = String(cString: X509_verify_cert_error_string(verifyResult))
            if let index = reasons.firstIndex(of: "certificate verify failed") {
                reasons[index] += ": " + text
            } else {
                reasons.append("certificate verify failed: " + text)
            }
        }
        return TLSError(reasons.isEmpty ? what : what + ": " + reasons.joined(separator: "; "))
    }
}

/// The thread's OpenSSL error queue, read as text.
enum OpenSSLErrorQueue {
    /// The reasons queued on this thread, oldest first, without repeats; the queue is emptied.
    @discardableResult
    static func drain() -> [String] {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            guard code != 0 else { break }
            let text: String
            if let reason = ERR_reason_error_string(code) {
                text = String(cString: reason)
            } else {
                var buffer = [CChar](repeating: 0, count: 256)
                ERR_error_string_n(code, &buffer, buffer.count)
                text = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            if !reasons.contains(text) { reasons.append(text) }
        }
        return reasons
    }
}
