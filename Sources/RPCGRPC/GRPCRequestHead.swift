import HTTP2Support
import RPCCore

/// What a gRPC request's header block asks for: the method, who calls and for whom, the
/// deadline and the message encodings — our CALL envelope, read from HTTP/2 headers as
/// docs/GRPC.md maps it.
struct GRPCRequestHead: Equatable {
    /// The call's head as every wire gives it to the core: `:path` (the method path we already
    /// use, `/moderation.v1.Moderation/KickMember`), `grpc-timeout`, the envelope's headers,
    /// custom metadata (every other header that is not HTTP/2's or gRPC's own; binary `-bin`
    /// values stay in their base64 text), and the header list's size.
    var call = CallHead(path: "")
    /// The API key, from `authorization: Bearer APP_ID:KEY` or `x-api-key` (`APP_ID:KEY` or `KEY`).
    var apiKey = ""
    /// The app the key is given for (the part before the key's first `:`), or empty.
    var appID = ""
    /// `grpc-encoding` of the request's messages: nil for identity.
    var messageEncoding: CompressionFormat?
    /// Encodings the client accepts for the response's messages (`grpc-accept-encoding`), in the
    /// client's order.
    var acceptedEncodings: [CompressionFormat] = []

    var path: String { call.path }
    var onBehalfOf: String { call.onBehalfOf }
    var idempotencyKey: String { call.idempotencyKey }
    var requestID: String { call.requestID }
    var metadata: [String: String] { call.metadata }
    var timeoutNanoseconds: UInt64? { call.timeoutNanoseconds }

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
                    .unimplemented, "grpc-encoding \(name) is not supported; this server accepts \(supportedEncodings)")
            )
        }
    }

    /// Headers with a meaning of their own here: never custom metadata.
    private static let reserved: Set<String> = [
        "content-type", "te", "user-agent", "authorization", "x-api-key", "x-on-behalf-of", "x-idempotency-key",
        "x-request-id", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host",
        "accept-encoding", "content-length",
    ]

    /// Reads a request's header fields (names lowercase, as HTTP/2 requires). On the hot path of
    /// every call: the common names were recognised as the fields were received, values are read
    /// as bytes in place, and text is made only of what the call keeps.
    ///
    /// `recent` holds the text of the connection's last request (its path, app and key), which
    /// the next one most often repeats: equal bytes reuse those strings instead of making new ones.
    static func parse(_ headers: HTTP2HeaderFields, recent: inout Recent) throws(Refusal) -> GRPCRequestHead {
        var head = GRPCRequestHead()
        head.call.byteCount = headers.listSize
        var method = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
        var contentType = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
        for index in 0..<headers.count {
            let field = headers.field(index)
            let value = field.value
            switch field.commonName {
            case .method?: method = value
            case .path?: head.call.path = text(value, reusing: &recent.path)
            case .contentType?: contentType = value
            case .grpcTimeout?:
                let text = String(decoding: value, as: UTF8.self)
                guard let timeout = GRPCTimeout.nanoseconds(text) else {
                    throw .grpc(.invalidArgument("grpc-timeout \"\(text)\" is not a timeout (digits and a unit)"))
                }
                head.call.timeoutNanoseconds = timeout
            case .grpcEncoding?: head.messageEncoding = try encoding(named: String(decoding: value, as: UTF8.self))
            case .grpcAcceptEncoding?:
                head.acceptedEncodings = value.split(separator: UInt8(ascii: ",")).compactMap { name in
                    switch trimmed(name) {
                    case let name where name.elementsEqual(Self.gzip): .gzip
                    case let name where name.elementsEqual(Self.deflate): .zlib
                    default: nil
                    }
                }
            case .authorization?:
                let bearer = Self.bearer
                guard value.count > bearer.count,
                    zip(value.prefix(bearer.count), bearer).allSatisfy({ $0 | 0x20 == $1 | 0x20 })
                else {
                    throw .grpc(.unauthenticated("the authorization header must be \"Bearer APP_ID:KEY\""))
                }
                (head.appID, head.apiKey) = splitKey(trimmed(value[bearer.count...]), recent: &recent)
            case .scheme?, .authority?, .te?, .userAgent?, .status?, .grpcStatus?, .grpcMessage?, .acceptEncoding?,
                .contentLength?:
                continue
            case nil:
                let name = String(decoding: field.name, as: UTF8.self)
                switch name {
                case "x-api-key":
                    if head.apiKey.isEmpty { (head.appID, head.apiKey) = splitKey(value[...], recent: &recent) }
                case CallHead.fieldNames.onBehalfOf: try once(value, named: name, into: &head.call.onBehalfOf)
                case CallHead.fieldNames.idempotencyKey: try once(value, named: name, into: &head.call.idempotencyKey)
                case CallHead.fieldNames.requestID: try once(value, named: name, into: &head.call.requestID)
                default:
                    if name.hasPrefix(":") || name.hasPrefix("grpc-") || reserved.contains(name) { continue }
                    head.call.metadata[name] = String(decoding: value, as: UTF8.self)
                }
            }
        }
        guard same(method, Self.post) else {
            let text = String(decoding: method, as: UTF8.self)
            throw .http(status: 405, message: "gRPC requests are POST; got \(text.isEmpty ? "no method" : text)")
        }
        if same(contentType, Self.grpcContentType) { return head }
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
                    .unimplemented, "\(text) is not served: messages are protobuf (application/grpc+proto)"))
        }
        return head
    }

    /// Sets a field named by a header that may come once: the same header again with another
    /// value is refused, so that a caller who asks to act as one user is never run as another.
    private static func once(
        _ value: UnsafeBufferPointer<UInt8>, named name: String, into field: inout String
    ) throws(Refusal) {
        let text = String(decoding: value, as: UTF8.self)
        guard field.isEmpty || field == text else {
            throw .grpc(.invalidArgument("\(name) is sent twice, as \"\(field)\" and \"\(text)\": send it once"))
        }
        field = text
    }

    /// `parse` of a block's fields (the block kept alive while they are read).
    static func parse(_ block: HTTP2HeaderBlock, recent: inout Recent) throws(Refusal) -> GRPCRequestHead {
        defer { withExtendedLifetime(block) {} }
        return try parse(block.fields, recent: &recent)
    }

    private static let post = Array("POST".utf8)
    private static let grpcContentType = Array("application/grpc".utf8)
    private static let bearer = Array("bearer ".utf8)
    private static let gzip = Array("gzip".utf8)
    private static let deflate = Array("deflate".utf8)

    /// True when `bytes` are `expected`'s, byte for byte (a plain loop: the generic
    /// `elementsEqual` costs more than the few bytes compared).
    private static func same(_ bytes: UnsafeBufferPointer<UInt8>, _ expected: [UInt8]) -> Bool {
        expected.withUnsafeBufferPointer { same(bytes, $0) }
    }

    private static func same(_ bytes: UnsafeBufferPointer<UInt8>, _ expected: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count == expected.count else { return false }
        var index = 0
        while index < expected.count && bytes[index] == expected[index] { index += 1 }
        return index == expected.count
    }

    /// The text of a connection's last request head that the next one most often repeats.
    struct Recent {
        var path = ""
        var appID = ""
        var apiKey = ""
    }

    /// `bytes` as text: `cached` itself when it spells the same bytes, otherwise a new string,
    /// which becomes `cached`.
    private static func text(_ bytes: UnsafeBufferPointer<UInt8>, reusing cached: inout String) -> String {
        let reused = cached.utf8.withContiguousStorageIfAvailable { same(bytes, $0) } ?? false
        if !reused { cached = String(decoding: bytes, as: UTF8.self) }
        return cached
    }

    /// `APP_ID:KEY` → the app and the key (reusing the last request's); a key with no `:` names no app.
    private static func splitKey(
        _ bytes: Slice<UnsafeBufferPointer<UInt8>>, recent: inout Recent
    ) -> (appID: String, key: String) {
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else {
            return ("", text(UnsafeBufferPointer(rebasing: bytes), reusing: &recent.apiKey))
        }
        return (
            text(UnsafeBufferPointer(rebasing: bytes[..<colon]), reusing: &recent.appID),
            text(UnsafeBufferPointer(rebasing: bytes[bytes.index(after: colon)...]), reusing: &recent.apiKey)
        )
    }

    /// `bytes` without the spaces and tabs around it.
    private static func trimmed(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Slice<UnsafeBufferPointer<UInt8>> {
        var text = bytes
        while let first = text.first, first == 0x20 || first == 0x09 { text = text.dropFirst() }
        while let last = text.last, last == 0x20 || last == 0x09 { text = text.dropLast() }
        return text
    }
}
