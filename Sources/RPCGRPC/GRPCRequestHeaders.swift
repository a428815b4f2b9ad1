public import HTTP2Support

/// The header block a gRPC client sends to open a call, as our clients send it (rpc-probe's
/// `--grpc` verbs and its load generator): gRPC's required fields, then who calls and for whom,
/// the call's ids and the caller's own fields (names lowercased: HTTP/2 allows no capitals).
public struct GRPCRequestHeaders {
    public var path: String
    /// "HOST:PORT" as connected to.
    public var authority: String
    /// `https` over TLS, else `http`.
    public var scheme = "http"
    /// The deadline, sent as `grpc-timeout` (0: none).
    public var timeoutMs: UInt64 = 0
    /// Ask for gzip- or deflate-compressed responses.
    public var acceptCompressed = false
    /// Sent as `authorization: Bearer KEY` (the key as given: `APP_ID:KEY` or bare).
    public var apiKey = ""
    public var onBehalfOf = ""
    public var requestID = ""
    public var idempotencyKey = ""
    public var custom: [String: String] = [:]

    public init(path: String, authority: String) {
        self.path = path
        self.authority = authority
    }

    /// "HOST:PORT" for `:authority`, an IPv6 host in brackets.
    public static func authority(host: String, port: UInt16) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    public var block: HTTP2HeaderBlock {
        var headers = [
            HTTP2Header(":method", "POST"), HTTP2Header(":scheme", scheme), HTTP2Header(":path", path),
            HTTP2Header(":authority", authority), HTTP2Header("content-type", "application/grpc"),
            HTTP2Header("te", "trailers"), HTTP2Header("user-agent", "rpc-probe"),
            HTTP2Header("grpc-accept-encoding", acceptCompressed ? "gzip,deflate,identity" : "identity"),
        ]
        if timeoutMs > 0 { headers.append(HTTP2Header("grpc-timeout", GRPCTimeout.text(milliseconds: timeoutMs))) }
        if !apiKey.isEmpty { headers.append(HTTP2Header("authorization", "Bearer \(apiKey)")) }
        if !onBehalfOf.isEmpty { headers.append(HTTP2Header("x-on-behalf-of", onBehalfOf)) }
        if !requestID.isEmpty { headers.append(HTTP2Header("x-request-id", requestID)) }
        if !idempotencyKey.isEmpty { headers.append(HTTP2Header("x-idempotency-key", idempotencyKey)) }
        for key in custom.keys.sorted() { headers.append(HTTP2Header(key.lowercased(), custom[key]!)) }
        return HTTP2HeaderBlock(headers)
    }
}
