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

    /// Reads a request header block (names lowercase, as HTTP/2 requires).
    static func parse(_ headers: [HTTP2Header]) throws(Refusal) -> GRPCRequestHead {
        var head = GRPCRequestHead()
        var method = ""
        var contentType = ""
        for header in headers {
            let name = header.name
            let value = header.stringValue
            switch name {
            case ":method": method = value
            case ":path": head.path = value
            case "content-type": contentType = value
            case "grpc-timeout":
                guard let timeout = GRPCTimeout.nanoseconds(value) else {
                    throw .grpc(.invalidArgument("grpc-timeout \"\(value)\" is not a timeout (digits and a unit)"))
                }
                head.timeoutNanoseconds = timeout
            case "grpc-encoding": head.messageEncoding = try encoding(named: value)
            case "grpc-accept-encoding":
                head.acceptedEncodings = value.split(separator: ",").compactMap { name in
                    switch name.trimmingSpaces {
                    case "gzip": .gzip
                    case "deflate": .zlib
                    default: nil
                    }
                }
            case "authorization":
                let bearer = value.split(separator: " ", maxSplits: 1)
                guard bearer.count == 2, bearer[0].lowercased() == "bearer" else {
                    throw .grpc(.unauthenticated("the authorization header must be \"Bearer APP_ID:KEY\""))
                }
                (head.appID, head.apiKey) = splitKey(String(bearer[1].trimmingSpaces))
            case "x-api-key":
                if head.apiKey.isEmpty { (head.appID, head.apiKey) = splitKey(value) }
            case "x-on-behalf-of": head.onBehalfOf = value
            case "x-idempotency-key": head.idempotencyKey = value
            case "x-request-id": head.requestID = value
            default:
                if name.hasPrefix(":") || name.hasPrefix("grpc-") || reserved.contains(name) { continue }
                head.metadata[name] = value
            }
        }
        guard method == "POST" else {
            throw .http(status: 405, message: "gRPC requests are POST; got \(method.isEmpty ? "no method" : method)")
        }
        guard
            contentType == "application/grpc" || contentType.hasPrefix("application/grpc+")
                || contentType.hasPrefix("application/grpc;")
        else {
            throw .http(
                status: 415,
                message:
                    "content-type must be application/grpc (or application/grpc+proto); got \(contentType.isEmpty ? "none" : contentType)"
            )
        }
        guard
            contentType == "application/grpc" || contentType.hasPrefix("application/grpc+proto")
                || contentType.hasPrefix("application/grpc;")
        else {
            throw .grpc(
                RPCError(
                    code: .unimplemented, errorCode: RuntimeErrorCode.badEncoding,
                    message: "\(contentType) is not served: messages are protobuf (application/grpc+proto)"))
        }
        return head
    }

    /// `APP_ID:KEY` → the app and the key; a key with no `:` names no app.
    private static func splitKey(_ text: String) -> (appID: String, key: String) {
        guard let colon = text.firstIndex(of: ":") else { return ("", text) }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text = text.dropFirst() }
        while text.last == " " || text.last == "\t" { text = text.dropLast() }
        return text
    }
}
