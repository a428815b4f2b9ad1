import ByteCoding
import GRPCMessages
import HTTP2Support
import ProtoBridge
import RPCCore
import Testing

@testable import RPCGRPC

/// The pieces of the gRPC wire on their own: `grpc-timeout`, `grpc-message`'s percent-encoding,
/// the request head, the status fields, the message reader, and the HTTP/1 sniff.
@Suite("gRPC wire pieces: timeout, percent-encoding, request head, status fields, message reader")
struct GRPCWireUnitTests {
    // MARK: GRPCTimeout

    @Test(
        "grpc-timeout: every unit, up to eight digits",
        arguments: [
            ("1H", 3_600_000_000_000), ("2M", 120_000_000_000), ("3S", 3_000_000_000), ("4m", 4_000_000),
            ("5u", 5_000), ("6n", 6), ("0S", 0), ("00000100m", 100_000_000), ("99999999S", 99_999_999_000_000_000),
            ("99999999n", 99_999_999),
        ] as [(String, UInt64)])
    func timeoutUnits(_ text: String, _ nanoseconds: UInt64) {
        #expect(GRPCTimeout.nanoseconds(text) == nanoseconds)
    }

    @Test(
        "grpc-timeout: bad forms are refused",
        arguments: ["", "S", "100", "123456789S", "1s", "1h", "-1S", "1.5S", " 1S", "1S ", "1X", "+1S", "１S"])
    func timeoutBadForms(_ text: String) {
        #expect(GRPCTimeout.nanoseconds(text) == nil)
    }

    @Test("grpc-timeout: 99999999H overflows UInt64 and saturates instead of wrapping")
    func timeoutOverflowSaturates() {
        // Plain values on both sides: `#expect` over an arithmetic expression on an optional
        // tripped AddressSanitizer inside the toolchain's AnyHashable conversion.
        let saturated = GRPCTimeout.nanoseconds("99999999H") ?? 0
        #expect(saturated == UInt64.max / 2)
        // The largest minutes value fits: no saturation there.
        let minutes = GRPCTimeout.nanoseconds("99999999M") ?? 0
        let expected: UInt64 = 99_999_999 * 60_000_000_000
        #expect(minutes == expected)
    }

    // MARK: GRPCPercentEncoding

    @Test(
        "grpc-message: percent-encoding of what is not printable ASCII, and of %",
        arguments: [
            ("plain text, (ok)!", "plain text, (ok)!"), ("100%", "100%25"), ("héllo", "h%C3%A9llo"),
            ("line\nbreak\ttab", "line%0Abreak%09tab"), ("日本", "%E6%97%A5%E6%9C%AC"), ("", ""),
            ("\u{7F}~", "%7F~"),
        ])
    func percentEncode(_ text: String, _ encoded: String) {
        #expect(GRPCPercentEncoding.encode(text) == encoded)
        #expect(GRPCPercentEncoding.decode(encoded) == text)
    }

    @Test(
        "grpc-message: decoding keeps malformed escapes and reads lowercase hex",
        arguments: [
            ("100%", "100%"), ("%zz", "%zz"), ("%4", "%4"), ("a%", "a%"), ("50%%41", "50%A"), ("%41%42", "AB"),
            ("%c3%a9", "é"), ("%G1x", "%G1x"),
        ])
    func percentDecodeMalformed(_ encoded: String, _ decoded: String) {
        #expect(GRPCPercentEncoding.decode(encoded) == decoded)
    }

    // MARK: GRPCRequestHead

    static func head(_ extra: [HTTP2Header], method: String = "POST", contentType: String? = "application/grpc")
        -> [HTTP2Header]
    {
        var headers = [
            HTTP2Header(":method", method), HTTP2Header(":scheme", "http"),
            HTTP2Header(":path", "/moderation.v1.Moderation/KickMember"), HTTP2Header(":authority", "localhost"),
        ]
        if let contentType { headers.append(HTTP2Header("content-type", contentType)) }
        return headers + [HTTP2Header("te", "trailers")] + extra
    }

    static func parse(_ extra: [HTTP2Header]) throws -> GRPCRequestHead {
        var recent = GRPCRequestHead.Recent()
        return try GRPCRequestHead.parse(HTTP2HeaderBlock(head(extra)), recent: &recent)
    }

    @Test(
        "the request head: a connection's next head reuses the last one's path and key only when they are the same bytes"
    )
    func requestHeadRecent() throws {
        var recent = GRPCRequestHead.Recent()
        let first = try GRPCRequestHead.parse(
            HTTP2HeaderBlock(Self.head([HTTP2Header("authorization", "Bearer app-one:key-0123456789abcdef")])),
            recent: &recent)
        #expect(first.path == "/moderation.v1.Moderation/KickMember")
        #expect(first.appID == "app-one" && first.apiKey == "key-0123456789abcdef")
        #expect(recent.path == first.path && recent.apiKey == first.apiKey)
        let same = try GRPCRequestHead.parse(
            HTTP2HeaderBlock(Self.head([HTTP2Header("authorization", "Bearer app-one:key-0123456789abcdef")])),
            recent: &recent)
        #expect(same == first)
        var other = Self.head([HTTP2Header("x-api-key", "key-0123456789abcdeX")])
        other[2] = HTTP2Header(":path", "/moderation.v1.Moderation/KickMembeR")
        let changed = try GRPCRequestHead.parse(HTTP2HeaderBlock(other), recent: &recent)
        #expect(changed.path == "/moderation.v1.Moderation/KickMembeR")
        #expect(changed.appID == "" && changed.apiKey == "key-0123456789abcdeX")
        #expect(recent.path == changed.path && recent.apiKey == changed.apiKey && recent.appID == "app-one")
    }

    @Test("the request head: path and each envelope header")
    func headEnvelope() throws {
        let head = try Self.parse([
            HTTP2Header("x-on-behalf-of", "user-7"), HTTP2Header("x-idempotency-key", "idem-1"),
            HTTP2Header("x-request-id", "req-9"), HTTP2Header("grpc-timeout", "250m"),
            HTTP2Header("grpc-encoding", "gzip"), HTTP2Header("grpc-accept-encoding", "identity, deflate ,gzip,br"),
        ])
        #expect(head.path == "/moderation.v1.Moderation/KickMember")
        #expect(head.onBehalfOf == "user-7")
        #expect(head.idempotencyKey == "idem-1")
        #expect(head.requestID == "req-9")
        #expect(head.timeoutNanoseconds == 250_000_000)
        #expect(head.messageEncoding == .gzip)
        #expect(head.acceptedEncodings == [.zlib, .gzip])
        #expect(head.metadata.isEmpty)
        #expect(head.apiKey.isEmpty && head.appID.isEmpty)
    }

    @Test(
        "the request head: grpc-encoding names",
        arguments: [("gzip", CompressionFormat.gzip), ("deflate", .zlib), ("identity", nil)]
            as [(
                String, CompressionFormat?
            )])
    func headEncodings(_ name: String, _ format: CompressionFormat?) throws {
        #expect(try Self.parse([HTTP2Header("grpc-encoding", name)]).messageEncoding == format)
    }

    @Test(
        "the request head: the key from authorization (Bearer forms) or x-api-key",
        arguments: [
            ([HTTP2Header("authorization", "Bearer app1:secret")], "app1", "secret"),
            ([HTTP2Header("authorization", "bearer secret")], "", "secret"),
            ([HTTP2Header("authorization", "BEARER  app1:sec:ret ")], "app1", "sec:ret"),
            ([HTTP2Header("x-api-key", "app2:k2")], "app2", "k2"),
            ([HTTP2Header("x-api-key", "k2")], "", "k2"),
            (
                [HTTP2Header("authorization", "Bearer app1:first"), HTTP2Header("x-api-key", "app2:second")], "app1",
                "first"
            ),
        ] as [([HTTP2Header], String, String)])
    func headKeys(_ headers: [HTTP2Header], _ appID: String, _ key: String) throws {
        let head = try Self.parse(headers)
        #expect(head.appID == appID)
        #expect(head.apiKey == key)
        #expect(head.metadata.isEmpty, "credentials never become metadata")
    }

    @Test(
        "the request head: authorization that is not Bearer is UNAUTHENTICATED",
        arguments: ["Basic dXNlcjpwdw==", "Bearer", "secret"])
    func headBadAuthorization(_ value: String) {
        #expect(
            Self.refusal(Self.head([HTTP2Header("authorization", value)]))
                == .grpc(.unauthenticated, RuntimeErrorCode.unauthenticated.name))
    }

    @Test("the request head: custom metadata kept (-bin values as text), reserved and pseudo headers dropped")
    func headMetadata() throws {
        let head = try Self.parse([
            HTTP2Header("x-tenant", "blue"), HTTP2Header("trace-bin", "AAEC/w"), HTTP2Header("user-agent", "grpc-go"),
            HTTP2Header("grpc-previous-rpc-attempts", "1"), HTTP2Header("content-length", "12"),
            HTTP2Header("accept-encoding", "gzip"), HTTP2Header("host", "x"), HTTP2Header("x-request-id", "r"),
        ])
        #expect(head.metadata == ["x-tenant": "blue", "trace-bin": "AAEC/w"])
    }

    /// What a refused head is refused with: an HTTP status, or a gRPC code and ERR_ code.
    enum Refused: Equatable {
        case http(Int)
        case grpc(StatusCode, String)
    }

    static func refusal(_ headers: [HTTP2Header]) -> Refused? {
        do {
            var recent = GRPCRequestHead.Recent()
            _ = try GRPCRequestHead.parse(HTTP2HeaderBlock(headers), recent: &recent)
            return nil
        } catch {
            switch error {
            case .http(let status, _): return .http(status)
            case .grpc(let error): return .grpc(error.code, error.errorCode)
            }
        }
    }

    @Test(
        "the request head: refusals (405, 415, UNIMPLEMENTED encodings, INVALID_ARGUMENT timeout or a field sent twice)",
        arguments: [
            (head([], method: "GET"), Refused.http(405)), (head([], method: "PUT"), .http(405)),
            (head([], contentType: "application/json"), .http(415)), (head([], contentType: nil), .http(415)),
            (head([], contentType: "text/grpc"), .http(415)),
            (
                head([], contentType: "application/grpc+json"),
                .grpc(.unimplemented, RuntimeErrorCode.unimplemented.name)
            ),
            (head([HTTP2Header("grpc-encoding", "br")]), .grpc(.unimplemented, RuntimeErrorCode.unimplemented.name)),
            (
                head([HTTP2Header("grpc-timeout", "soon")]),
                .grpc(.invalidArgument, RuntimeErrorCode.invalidArgument.name)
            ),
            (
                head([HTTP2Header("grpc-timeout", "123456789m")]),
                .grpc(.invalidArgument, RuntimeErrorCode.invalidArgument.name)
            ),
            (
                head([HTTP2Header("x-on-behalf-of", "u4"), HTTP2Header("x-on-behalf-of", "u2")]),
                .grpc(.invalidArgument, RuntimeErrorCode.invalidArgument.name)
            ),
            (
                head([HTTP2Header("x-idempotency-key", "a"), HTTP2Header("x-idempotency-key", "b")]),
                .grpc(.invalidArgument, RuntimeErrorCode.invalidArgument.name)
            ),
        ] as [([HTTP2Header], Refused)])
    func headRefusals(_ headers: [HTTP2Header], _ expected: Refused) {
        #expect(Self.refusal(headers) == expected)
    }

    @Test(
        "the request head: content types that are gRPC with protobuf are accepted",
        arguments: ["application/grpc", "application/grpc+proto", "application/grpc;charset=utf-8"])
    func headContentTypes(_ type: String) {
        #expect(Self.refusal(Self.head([], contentType: type)) == nil)
    }

    @Test("the request head: an unsupported grpc-encoding names the accepted list")
    func headEncodingMessage() {
        do {
            var recent = GRPCRequestHead.Recent()
            _ = try GRPCRequestHead.parse(
                HTTP2HeaderBlock(Self.head([HTTP2Header("grpc-encoding", "snappy")])), recent: &recent)
            Issue.record("snappy accepted")
        } catch {
            guard case .grpc(let error) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(error.message.contains("snappy"))
            #expect(error.message.contains(GRPCRequestHead.supportedEncodings))
        }
    }

    // MARK: GRPCStatusFields

    @Test("status fields: OK is just grpc-status 0")
    func statusOK() {
        #expect(GRPCStatusFields.fields(for: nil, path: "/x.X/M").map { "\($0.name)=\($0.value)" } == ["grpc-status=0"])
        let ok = RPCError(code: .ok, errorCode: "", message: "fine")
        #expect(GRPCStatusFields.fields(for: ok, path: "/x.X/M").map { "\($0.name)=\($0.value)" } == ["grpc-status=0"])
    }

    @Test("status fields: an error's code, encoded message, and details-bin decoding to Status with ErrorInfo")
    func statusError() throws {
        let error = RPCError(
            .unavailable, "50% draining — é",
            details: ["last_seq": "42", "retry_after_ms": "250"])
        let fields = GRPCStatusFields.fields(for: error, path: "/moderation.v1.Moderation/KickMember")
        try #require(fields.map(\.name) == ["grpc-status", "grpc-message", "grpc-status-details-bin"])
        #expect(fields[0].value == "14")
        #expect(fields[1].value == "50%25 draining %E2%80%94 %C3%A9")
        #expect(!fields[2].value.contains("="), "grpc-status-details-bin is unpadded base64")
        let status = try Google_Rpc_Status(serializedBytes: Base64.decode(fields[2].value, padding: .optional))
        #expect(status.code == 14)
        #expect(status.message == "50% draining — é")
        try #require(status.details.count == 1)
        #expect(status.details[0].typeURL == "type.googleapis.com/google.rpc.ErrorInfo")
        let info = try #require(try status.details[0].unpack(Google_Rpc_ErrorInfo.self))
        #expect(info.reason == "ERR_UNAVAILABLE")
        #expect(info.domain == "moderation.v1")
        #expect(info.metadata == ["last_seq": "42", "retry_after_ms": "250"])
    }

    @Test("status fields: an error without message or ERR_ code has no grpc-message and no ErrorInfo")
    func statusBare() throws {
        let fields = GRPCStatusFields.fields(for: RPCError(code: .internal, errorCode: "", message: ""), path: "/d.D/M")
        #expect(fields.map(\.name) == ["grpc-status", "grpc-status-details-bin"])
        let status = try Google_Rpc_Status(serializedBytes: Base64.decode(fields[1].value, padding: .optional))
        #expect(status.code == 13)
        #expect(status.details.isEmpty)
    }

    @Test(
        "status fields: ErrorInfo's domain is the package of the method's service",
        arguments: [
            ("/moderation.v1.Moderation/KickMember", "moderation.v1"),
            ("/grpc.health.v1.Health/Check", "grpc.health.v1"),
            ("/mrpc.test.v1.Test/Park", "mrpc.test.v1"), ("/Service/Method", "mrpc"), ("", "mrpc"), ("/.Svc/M", "mrpc"),
            ("a.b.C/M", "a.b"), ("/a.B", "a"),
        ])
    func statusDomain(_ path: String, _ domain: String) {
        #expect(GRPCStatusFields.domain(ofPath: path) == domain)
    }

    // MARK: GRPCMessageReader

    @Test("message reader: a message split byte by byte arrives once, whole")
    func readerSplit() throws {
        let message = Array("a message split into single bytes".utf8)
        let framed = GRPCMessageReader.frame(message, compressed: true)
        var reader = GRPCMessageReader()
        var got: [GRPCMessageReader.Message] = []
        for (index, byte) in framed.enumerated() {
            let out = try reader.append([byte], limit: 1024)
            if index < framed.count - 1 { #expect(out.isEmpty) }
            got += out
        }
        #expect(got == [GRPCMessageReader.Message(compressed: true, bytes: message[...])])
        #expect(reader.pending.isEmpty)
    }

    @Test("message reader: several messages in one chunk, the next one's start kept pending")
    func readerSeveral() throws {
        let messages = [[1, 2, 3], [], [4, 5]] as [[UInt8]]
        let next = GRPCMessageReader.frame([9, 9, 9, 9], compressed: false)
        var reader = GRPCMessageReader()
        let chunk = messages.flatMap { GRPCMessageReader.frame($0, compressed: false) } + next.prefix(6)
        let got = try reader.append(chunk, limit: 16)
        #expect(got.map { Array($0.bytes) } == messages)
        #expect(got.allSatisfy { !$0.compressed })
        #expect(reader.pending == Array(next.prefix(6)))
        #expect(try reader.append(Array(next.dropFirst(6)), limit: 16).map { Array($0.bytes) } == [[9, 9, 9, 9]])
    }

    @Test("message reader: a length over the limit is refused from the 5-byte prefix alone; at the limit it is not")
    func readerLimit() throws {
        var reader = GRPCMessageReader()
        #expect(try reader.append([0, 0, 0, 1, 0], limit: 256).isEmpty, "256 bytes announced, at the limit")
        var over = GRPCMessageReader()
        do {
            _ = try over.append([0, 0, 0, 1, 1], limit: 256)
            Issue.record("a 257-byte announcement was accepted")
        } catch {
            #expect(error.code == .resourceExhausted)
            #expect(error.errorCode == RuntimeErrorCode.messageTooLarge.name)
        }
        var huge = GRPCMessageReader()
        #expect(throws: RPCError.self) { try huge.append([1, 0xFF, 0xFF, 0xFF, 0xFF], limit: 4 << 20) }
    }

    @Test(
        "message reader: a compressed flag other than 0 or 1 is a protocol error",
        arguments: [2, 0x80, 0xFF] as [UInt8])
    func readerBadFlag(_ flag: UInt8) {
        var reader = GRPCMessageReader()
        do {
            _ = try reader.append([flag, 0, 0, 0, 1, 7], limit: 16)
            Issue.record("flag \(flag) accepted")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.errorCode == RuntimeErrorCode.protocolViolation.name)
        }
    }

    // MARK: GRPCCodec.looksLikeHTTP1

    @Test(
        "the HTTP/1 sniff: a request line is HTTP/1, HTTP/2's preface and other bytes are not",
        arguments: [
            ("GET / HTTP/1.1\r\nHost: x\r\n\r\n", true), ("POST /grpc.health.v1.Health/Check HTTP/1.0\r\n", true),
            ("OPTIONS * HTTP/1.1\r\n", true), ("GET / HTTP/1.1", true), ("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", false),
            ("get / HTTP/1.1\r\n", false), (" GET / HTTP/1.1\r\n", false), ("GET / HTTP/2\r\n", false),
            ("GET /\r\nHTTP/1.1", false), ("", false), ("\u{0}\u{0}\u{12}\u{4}", false),
        ])
    func looksLikeHTTP1(_ text: String, _ expected: Bool) {
        let bytes = Array(text.utf8)
        #expect(bytes.withUnsafeBytes { GRPCCodec.looksLikeHTTP1($0) } == expected)
    }
}
