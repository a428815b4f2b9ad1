/// Why a submission (response headers, data, trailers, reset, GOAWAY) was refused.
///
/// These are the caller's mistakes or races with the peer (the stream closed meanwhile), not
/// connection failures: the session goes on.
public struct HTTP2Error: Error, Sendable, Equatable, CustomStringConvertible {
    /// nghttp2's error code (negative, `NGHTTP2_ERR_…`), or 0 for the session's own checks.
    public var code: Int32
    /// What went wrong, for a log line.
    public var message: String

    /// An error with nghttp2's code and text.
    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { code == 0 ? message : "\(message) (nghttp2 \(code))" }
}
