import HTTP2Support
import RPCCore

/// What a gRPC request's header block asks for: the method, who calls and for whom, the
/// deadline and the message encodings — our CALL envelope, read from HTTP/2 headers as
/// docs/GRPC.md maps it.
struct GRPCRequestHead: Equatable {
    /// `:path`, the method path we already use (`/moderation.v1.Moderation/KickMember`).
    var path = ""
    /// The API key, from `authorization: Bearer APP_ID:KEY` or `x-api-key` (`APP_ID:KEY` or `KEY`).
    var apiKey = ""
    /// The app the key is given for (the part before the key's first `:`), or empty.
    var appID = ""
    var onBehalfOf = ""
    var idempotencyKey = ""
    var requestID = ""
    /// Custom metadata: every other header that is not HTTP/2's or gRPC's own (binary `-bin`
    /// values stay in their base64 text).
    var metadata: [String: String] = [:]
    /// `grpc-timeout`, in nanoseconds.
    var timeoutNanoseconds: UInt64?
    /// `grpc-encoding` of the request's messages: nil for identity.
    var messageEncoding: CompressionFormat?
    /// Encodings the client accepts for the response's messages (`grpc-accept-encoding`), in the
    /// client's order.
    var acceptedEncodings: [CompressionFormat] = []

    /// Why a request is refused from its headers alone.
    enum Refusal: Error, Equatable {
        /// Not a gRPC request at all: an HTTP status and a text body (no gRPC status applies).
        case http(status: Int, message: String)
        /// A gRPC request the server cannot serve: a trailers-only response with this error.
        case grpc(RPCError)
    }

    /// The encodings this server reads and writes, as `grpc-accept-encoding` lists them.
    static let supportedEncodings = "gzip,deflate,identity"

    /// The encoding named `name` (gRPC's names), nil for identity; throws for one not supported.
    static func encoding(named name: String) throws(Refusal) -> CompressionFormat? {
        switch name {
        case "", "identity": return nil
        case "gzip": return .gzip
        case "deflate": return .zlib
        default:
            throw .grpc(
                RPCError(
                    code: .unimplemented, errorCode: RuntimeErrorCode.badEncoding,
                    message: "grpc-encoding \(name) is not supported; this server accepts \(supportedEncodings)"))
        }
    }

    /// Headers with a meaning of their own here: never custom metadata.
    private static let reserved: Set<String> = [
        "content-type", "te", "user-agent", "authorization", "x-api-key", "x-on-behalf-of", "x-idempotency-key",
        "x-request-id", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host",
        "accept-encoding", "content-length",
    ]

    /// Reads a request header block (names lowercase, as HTTP/2 requires). On the hot path of
    /// every call: values are read as bytes, and text is made only of what the call keeps.
    static func parse(_ headers: [HTTP2Header]) throws(Refusal) -> GRPCRequestHead {
        var head = GRPCRequestHead()
        var method: [UInt8] = []
        var contentType: [UInt8] = []
        for header in headers {
            let name = header.name
            let value = header.value
            switch name {
            case ":method": method = value
            case ":path": head.path = String(decoding: value, as: UTF8.self)
            case "content-type": contentType = value
            case ":scheme", ":authority", "te", "user-agent": continue
            case "grpc-timeout":
                let text = String(decoding: value, as: UTF8.self)
                guard let timeout = GRPCTimeout.nanoseconds(text) else {
                    throw .grpc(.invalidArgument("grpc-timeout \"\(text)\" is not a timeout (digits and a unit)"))
                }
                head.timeoutNanoseconds = timeout
            case "grpc-encoding": head.messageEncoding = try encoding(named: String(decoding: value, as: UTF8.self))
            case "grpc-accept-encoding":
                head.acceptedEncodings = value.split(separator: UInt8(ascii: ",")).compactMap { name in
                    switch trimmed(name) {
                    case Self.gzip[...]: .gzip
                    case Self.deflate[...]: .zlib
                    default: nil
                    }
                }
            case "authorization":
                let bearer = Self.bearer
                guard value.count > bearer.count,
                    zip(value.prefix(bearer.count), bearer).allSatisfy({ $0 | 0x20 == $1 | 0x20 })
                else {
                    throw .grpc(.unauthenticated("the authorization header must be \"Bearer APP_ID:KEY\""))
                }
                (head.appID, head.apiKey) = splitKey(trimmed(value[bearer.count...]))
            case "x-api-key":
                if head.apiKey.isEmpty { (head.appID, head.apiKey) = splitKey(value[...]) }
            case "x-on-behalf-of": head.onBehalfOf = String(decoding: value, as: UTF8.self)
            case "x-idempotency-key": head.idempotencyKey = String(decoding: value, as: UTF8.self)
            case "x-request-id": head.requestID = String(decoding: value, as: UTF8.self)
            default:
                if name.hasPrefix(":") || name.hasPrefix("grpc-") || reserved.contains(name) { continue }
                head.metadata[name] = String(decoding: value, as: UTF8.self)
            }
        }
        guard method == Self.post else {
            let text = String(decoding: method, as: UTF8.self)
            throw .http(status: 405, message: "gRPC requests are POST; got \(text.isEmpty ? "no method" : text)")
        }
        if contentType == Self.grpcContentType { return head }
        let text = String(decoding: contentType, as: UTF8.self)
        guard text.hasPrefix("application/grpc+") || text.hasPrefix("application/grpc;") else {
            throw .http(
                status: 415,
                message:
                    "content-type must be application/grpc (or application/grpc+proto); got \(text.isEmpty ? "none" : text)"
            )
        }
        guard text.hasPrefix("application/grpc+proto") || text.hasPrefix("application/grpc;") else {
            throw .grpc(
                RPCError(
                    code: .unimplemented, errorCode: RuntimeErrorCode.badEncoding,
                    message: "\(text) is not served: messages are protobuf (application/grpc+proto)"))
        }
        return head
    }

    private static let post = Array("POST".utf8)
    private static let grpcContentType = Array("application/grpc".utf8)
    private static let bearer = Array("bearer ".utf8)
    private static let gzip = Array("gzip".utf8)
    private static let deflate = Array("deflate".utf8)

    /// `APP_ID:KEY` → the app and the key; a key with no `:` names no app.
    private static func splitKey(_ bytes: ArraySlice<UInt8>) -> (appID: String, key: String) {
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else {
            return ("", String(decoding: bytes, as: UTF8.self))
        }
        return (
            String(decoding: bytes[..<colon], as: UTF8.self),
            String(decoding: bytes[bytes.index(after: colon)...], as: UTF8.self)
        )
    }

    /// `bytes` without the spaces and tabs around it.
    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var text = bytes
        while let first = text.first, first == 0x20 || first == 0x09 { text = text.dropFirst() }
        while let last = text.last, last == 0x20 || last == 0x09 { text = text.dropLast() }
        return text
    }
}
