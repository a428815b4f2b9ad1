import GRPCMessages
import HTTP2Support
import ProtoBridge
import RPCCore
import RPCMessages
import TestSupport
import Testing

@testable import RPCGRPC

/// `GRPCSession` against nghttp2's own client, no socket: requests mapped to calls, handler
/// frames translated to gRPC responses, errors in the rich error model, deadlines, cancels,
/// compression, limits, drain, and what is not gRPC.
@Suite("GRPCSession: gRPC calls over an in-process nghttp2 client")
struct GRPCSessionTests {
    static let echoPath = DiagnosticsMethods.echo.path

    static func echo(_ payload: [UInt8]) -> [UInt8] { EchoRequest(payload: payload).serializedBytes() }

    static var smallLimits: ServerLimits {
        var limits = ServerLimits()
        limits.maxMessageBytes = 64 * 1024
        return limits
    }

    /// A method that fails with an ERR_ code and details, as a storage-backed handler does.
    static let failing = ProtoMethod<EchoRequest, EchoResponse>(
        service: "mrpc.test.v1.Failing", name: "Fail", serverStreaming: false)

    static func registerFailing(_ table: inout MethodTable) {
        table.addUnary(failing) { _, _, responder in
            responder.fail(
                RPCError(
                    .rateLimited, "slow down: 100% used",
                    details: ["retry_after_ms": "250", "limit": "10"]))
        }
    }

    static func decoded<M: ProtoMessage>(_ type: M.Type, _ response: GRPCResponse) throws -> [M] {
        try response.messages().map {
            #expect(!$0.compressed)
            return try M(serializedBytes: $0.bytes)
        }
    }

    /// Checks a trailers-only error response: its code and ErrorInfo reason and domain.
    static func expectTrailersOnly(
        _ response: GRPCResponse, _ code: StatusCode, reason: String, domain: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(response.ended, "\(response)", sourceLocation: sourceLocation)
        #expect(response.trailersOnly, "\(response)", sourceLocation: sourceLocation)
        #expect(response.httpStatus == "200", sourceLocation: sourceLocation)
        #expect(response.headers.first(named: "content-type") == "application/grpc", sourceLocation: sourceLocation)
        #expect(response.body.isEmpty, sourceLocation: sourceLocation)
        #expect(response.grpcStatus == Int(code.rawValue), "\(response.trailers)", sourceLocation: sourceLocation)
        let info = try response.errorInfo()
        #expect(info.reason == reason, sourceLocation: sourceLocation)
        if let domain { #expect(info.domain == domain, sourceLocation: sourceLocation) }
        #expect(try response.statusDetails().code == Int32(code.rawValue), sourceLocation: sourceLocation)
    }

    // MARK: Unary

    @Test("unary Echo: response headers, one message, trailers grpc-status 0")
    func unaryEcho() throws {
        let harness = GRPCSessionHarness()
        let response = harness.call(path: Self.echoPath, message: Self.echo([1, 2, 3]))
        #expect(response.ended && !response.trailersOnly)
        #expect(response.httpStatus == "200")
        #expect(response.headers.first(named: "content-type") == "application/grpc")
        #expect(response.headers.first(named: "grpc-status") == nil, "the status is in the trailers")
        #expect(try Self.decoded(EchoResponse.self, response).map(\.payload) == [[1, 2, 3]])
        #expect(response.trailers.map(\.name) == ["grpc-status"])
        #expect(response.grpcStatus == 0)
        #expect(harness.core.liveCallCount == 0)
    }

    @Test("an unknown method: trailers-only UNIMPLEMENTED with ErrorInfo ERR_UNIMPLEMENTED")
    func unknownMethod() throws {
        let harness = GRPCSessionHarness()
        let response = harness.call(path: "/mrpc.test.v1.Test/Nope", message: Self.echo([]))
        try Self.expectTrailersOnly(response, .unimplemented, reason: "ERR_UNIMPLEMENTED", domain: "mrpc.test.v1")
        #expect(GRPCPercentEncoding.decode(response.grpcMessage ?? "").contains("/mrpc.test.v1.Test/Nope"))
    }

    /// A request's credentials and whether they authenticate.
    struct Credentials: Sendable, CustomTestStringConvertible {
        let name: String
        let authorization: String?
        let extra: [HTTP2Header]
        let accepted: Bool
        var testDescription: String { name }
    }

    @Test(
        "credentials: a missing or wrong key is UNAUTHENTICATED (ERR_UNAUTHENTICATED); good ones call",
        arguments: [
            Credentials(name: "no key", authorization: nil, extra: [], accepted: false),
            Credentials(name: "wrong key", authorization: "Bearer app1:wrong", extra: [], accepted: false),
            Credentials(
                name: "another app's key", authorization: "Bearer app2:\(Frames.apiKey)", extra: [], accepted: false),
            Credentials(name: "not Bearer", authorization: "Basic abc", extra: [], accepted: false),
            Credentials(name: "Bearer APP_ID:KEY", authorization: GRPCSessionHarness.bearer, extra: [], accepted: true),
            Credentials(name: "Bearer KEY", authorization: "Bearer key-of-app2", extra: [], accepted: true),
            Credentials(
                name: "x-api-key", authorization: nil, extra: [HTTP2Header("x-api-key", Frames.apiKey)], accepted: true),
            Credentials(
                name: "wrong x-api-key", authorization: nil, extra: [HTTP2Header("x-api-key", "nope")], accepted: false),
        ])
    func credentials(_ credentials: Credentials) throws {
        let recorder = TransportEventRecorder()
        let harness = GRPCSessionHarness(observer: recorder)
        let response = harness.call(
            path: Self.echoPath, message: Self.echo([7]), authorization: credentials.authorization,
            extra: credentials.extra)
        if credentials.accepted {
            #expect(response.grpcStatus == 0)
            #expect(try Self.decoded(EchoResponse.self, response).map(\.payload) == [[7]])
            #expect(recorder.events.isEmpty)
        } else {
            try Self.expectTrailersOnly(response, .unauthenticated, reason: "ERR_UNAUTHENTICATED")
            #expect(recorder.events == [.authenticationFailed(.grpc, logged: true)], "counted once for /metrics")
        }
    }

    @Test("a connection's first bytes that are not HTTP/2's preface are reported as a bad preface, once")
    func badPrefaceReported() {
        for bytes in [Array(repeating: UInt8(0x55), count: 32), Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)] {
            let recorder = TransportEventRecorder()
            let harness = GRPCSessionHarness(observer: recorder)
            _ = harness.receiveRaw(bytes)
            #expect(harness.core.closeRequested)
            #expect(recorder.events.contains(.handshakeRefused(.badPreface, .grpc)))
            #expect(recorder.events.filter { $0 == .handshakeRefused(.badPreface, .grpc) }.count == 1)
        }
    }

    @Test("no request within the handshake timeout: GOAWAY, close, and one refused handshake reported")
    func handshakeTimeoutReported() {
        var limits = ServerLimits()
        limits.handshakeTimeoutMs = 500
        let recorder = TransportEventRecorder()
        let harness = GRPCSessionHarness(limits: limits, observer: recorder)
        harness.pump()
        harness.clock.advance(ms: 499)
        _ = harness.core.tick(now: harness.clock.now)
        #expect(!harness.core.closeRequested)
        harness.clock.advance(ms: 2)
        _ = harness.core.tick(now: harness.clock.now)
        #expect(harness.core.closeRequested)
        harness.clock.advance(ms: 1_000)
        _ = harness.core.tick(now: harness.clock.now)
        #expect(recorder.events == [.handshakeRefused(.timeout, .grpc)])
    }

    @Test("a handler's error with details: code, message, and ErrorInfo metadata carrying the details")
    func handlerErrorDetails() throws {
        let harness = GRPCSessionHarness(register: Self.registerFailing)
        let response = harness.call(path: Self.failing.path, message: Self.echo([]))
        try Self.expectTrailersOnly(response, .resourceExhausted, reason: "ERR_RATE_LIMITED", domain: "mrpc.test.v1")
        #expect(response.grpcMessage == "slow down: 100%25 used")
        #expect(try response.errorInfo().metadata == ["retry_after_ms": "250", "limit": "10"])
        #expect(try response.statusDetails().message == "slow down: 100% used")
    }

    @Test("a worker-pool method answers only once the workers run")
    func workerPool() throws {
        let harness = GRPCSessionHarness()
        let id = harness.start(path: TestService.sleep.path, message: Self.echo(TestService.sleepPayload(ms: 0)))
        #expect(harness.offload.count == 1)
        #expect(!harness.response(id).ended)
        #expect(harness.core.liveCallCount == 1)
        #expect(harness.runWorkers() == 1)
        let response = harness.response(id)
        #expect(response.grpcStatus == 0)
        #expect(try Self.decoded(EchoResponse.self, response).map(\.payload) == [TestService.sleepPayload(ms: 0)])
        #expect(harness.core.liveCallCount == 0)
    }

    // MARK: Streams

    @Test("server streaming: several messages in order, then trailers grpc-status 0")
    func serverStreaming() throws {
        let harness = GRPCSessionHarness()
        let response = harness.call(path: TestService.count.path, message: Self.echo([4]))
        #expect(!response.trailersOnly && response.ended)
        #expect(
            try Self.decoded(EchoResponse.self, response).map(\.payload)
                == (1...4).map { TestService.streamPayload(seq: $0) })
        #expect(response.grpcStatus == 0)
    }

    @Test("grpc.health.v1 Watch: SERVING now, the stream stays open")
    func healthWatch() throws {
        let harness = GRPCSessionHarness()
        let request = Grpc_Health_V1_HealthCheckRequest(service: "").serializedBytes()
        let id = harness.start(path: Grpc_Health_V1_HealthMethods.watch.path, message: request)
        let response = harness.response(id)
        #expect(!response.ended)
        #expect(try Self.decoded(Grpc_Health_V1_HealthCheckResponse.self, response).map(\.status) == [.serving])
        #expect(harness.core.liveCallCount == 1)
    }

    @Test("grpc-timeout past: DEADLINE_EXCEEDED in the trailers after the sent message; the handler is told")
    func deadline() throws {
        let harness = GRPCSessionHarness()
        let start = harness.clock.now
        let id = harness.start(
            path: TestService.follow.path, message: Self.echo([]), extra: [HTTP2Header("grpc-timeout", "50m")])
        try #require(harness.deadlines.count == 1)
        #expect(harness.deadlines[0].deadline == start + 50_000_000)
        #expect(harness.deadlines[0].streamID == UInt32(id))
        harness.expireDeadlines(afterMs: 10)
        #expect(!harness.response(id).ended, "not yet")
        harness.expireDeadlines(afterMs: 45)
        let response = harness.response(id)
        #expect(response.ended && !response.trailersOnly)
        #expect(try response.messages().count == 1)
        #expect(response.grpcStatus == Int(StatusCode.deadlineExceeded.rawValue))
        #expect(try response.errorInfo().reason == "ERR_DEADLINE_EXCEEDED")
        #expect(harness.service.termination(of: UInt32(id)) == .deadlineExceeded)
        #expect(harness.core.liveCallCount == 0)
    }

    @Test("grpc-timeout past before a worker ran the call: trailers-only DEADLINE_EXCEEDED")
    func deadlineBeforeWorker() throws {
        let harness = GRPCSessionHarness()
        let id = harness.start(
            path: TestService.park.path, message: Self.echo([1]), extra: [HTTP2Header("grpc-timeout", "1m")])
        harness.expireDeadlines(afterMs: 2)
        try Self.expectTrailersOnly(harness.response(id), .deadlineExceeded, reason: "ERR_DEADLINE_EXCEEDED")
        harness.runWorkers()
        #expect(harness.service.parkedCount == 0, "a call past its deadline is not run")
    }

    @Test("the client's RST_STREAM cancels the call: its termination handler runs")
    func clientReset() throws {
        let harness = GRPCSessionHarness()
        let id = harness.start(path: TestService.follow.path, message: Self.echo([]))
        #expect(harness.core.liveCallCount == 1)
        #expect(harness.service.follower(UInt32(id)) != nil)
        harness.client.reset(streamID: id)
        harness.pump()
        #expect(harness.service.termination(of: UInt32(id)) == .cancelled)
        #expect(harness.core.liveCallCount == 0)
        #expect(harness.service.send(on: UInt32(id), seq: 2) != nil)
        harness.pump()
        #expect(try harness.response(id).messages().count == 1, "nothing is sent on a reset stream")
    }

    // MARK: Compression

    @Test(
        "compressed requests inflate: gzip and deflate",
        arguments: [("gzip", CompressionFormat.gzip), ("deflate", .zlib)] as [(String, CompressionFormat)])
    func compressedRequest(_ name: String, _ format: CompressionFormat) throws {
        let harness = GRPCSessionHarness()
        let payload = Array(String(repeating: "compress me ", count: 200).utf8)
        var compressed: [UInt8] = []
        Self.echo(payload).withUnsafeBytes {
            Deflater(windowBits: 15, memoryLevel: 8, format: format).compressIndependent($0, appendingTo: &compressed)
        }
        #expect(compressed.count < payload.count)
        let response = harness.call(
            path: Self.echoPath, message: compressed, compressed: true, extra: [HTTP2Header("grpc-encoding", name)])
        #expect(response.grpcStatus == 0, "\(response.trailers)")
        #expect(try Self.decoded(EchoResponse.self, response).map(\.payload) == [payload])
    }

    @Test("a message flagged compressed with no grpc-encoding is refused")
    func compressedWithoutEncoding() throws {
        let harness = GRPCSessionHarness()
        let response = harness.call(path: Self.echoPath, message: [1, 2, 3], compressed: true)
        try Self.expectTrailersOnly(response, .invalidArgument, reason: "ERR_PROTOCOL")
    }

    @Test(
        "the response is compressed when the client accepts gzip and the message is at least 1 KiB; small ones are not")
    func compressedResponse() throws {
        let harness = GRPCSessionHarness()
        let accept = [HTTP2Header("grpc-accept-encoding", "gzip")]
        let large = Array(String(repeating: "a compressible payload ", count: 100).utf8)
        let big = harness.call(path: Self.echoPath, message: Self.echo(large), extra: accept)
        #expect(big.headers.first(named: "grpc-encoding") == "gzip")
        let messages = try big.messages()
        try #require(messages.count == 1)
        #expect(messages[0].compressed)
        #expect(messages[0].bytes.count < large.count)
        var inflated: [UInt8] = []
        try Inflater(format: .gzip).inflateIndependent(messages[0].bytes, limit: 1 << 20, appendingTo: &inflated)
        #expect(try EchoResponse(serializedBytes: inflated).payload == large)

        let small = harness.call(path: Self.echoPath, message: Self.echo([1, 2, 3]), extra: accept)
        #expect(try Self.decoded(EchoResponse.self, small).map(\.payload) == [[1, 2, 3]])

        let plain = harness.call(path: Self.echoPath, message: Self.echo(large))
        #expect(plain.headers.first(named: "grpc-encoding") == nil)
        #expect(try Self.decoded(EchoResponse.self, plain).map(\.payload) == [large])
    }

    // MARK: Limits

    @Test("a message announced over maxMessageBytes: RESOURCE_EXHAUSTED ERR_MESSAGE_TOO_LARGE before its body")
    func oversizedPrefix() throws {
        let harness = GRPCSessionHarness(limits: Self.smallLimits)
        let prefix: [UInt8] = [0, 0, 0x10, 0, 0] // 1 MiB announced; nothing of it sent
        let id = harness.send(headers: GRPCSessionHarness.headers(path: Self.echoPath), body: prefix, endStream: false)
        try Self.expectTrailersOnly(harness.response(id), .resourceExhausted, reason: "ERR_MESSAGE_TOO_LARGE")
        #expect(harness.core.liveCallCount == 0)
    }

    @Test("a gzip bomb inflating past maxMessageBytes: RESOURCE_EXHAUSTED ERR_MESSAGE_TOO_LARGE")
    func gzipBomb() throws {
        let harness = GRPCSessionHarness(limits: Self.smallLimits)
        let zeros = [UInt8](repeating: 0, count: 1 << 20)
        var bomb: [UInt8] = []
        zeros.withUnsafeBytes {
            Deflater(windowBits: 15, memoryLevel: 8, level: 9, format: .gzip).compressIndependent(
                $0, appendingTo: &bomb)
        }
        #expect(bomb.count < 8 * 1024)
        let response = harness.call(
            path: Self.echoPath, message: bomb, compressed: true, extra: [HTTP2Header("grpc-encoding", "gzip")])
        try Self.expectTrailersOnly(response, .resourceExhausted, reason: "ERR_MESSAGE_TOO_LARGE")
    }

    @Test("a unary call with two messages, or none: INVALID_ARGUMENT")
    func messageCount() throws {
        let harness = GRPCSessionHarness()
        let two = GRPCSessionHarness.frame(Self.echo([1])) + GRPCSessionHarness.frame(Self.echo([2]))
        let id = harness.send(headers: GRPCSessionHarness.headers(path: Self.echoPath), body: two)
        try Self.expectTrailersOnly(harness.response(id), .invalidArgument, reason: "ERR_INVALID_ARGUMENT")
        let none = harness.send(headers: GRPCSessionHarness.headers(path: Self.echoPath), body: nil)
        try Self.expectTrailersOnly(harness.response(none), .invalidArgument, reason: "ERR_INVALID_ARGUMENT")
        let cut = harness.send(
            headers: GRPCSessionHarness.headers(path: Self.echoPath),
            body: Array(GRPCSessionHarness.frame(Self.echo([1, 2, 3])).dropLast()))
        try Self.expectTrailersOnly(harness.response(cut), .invalidArgument, reason: "ERR_PROTOCOL")
        #expect(harness.core.liveCallCount == 0)
    }

    @Test(
        "the connection's buffered-input cap: the stream that passes it gets ERR_OVERLOADED; the budget returns to 0")
    func bufferedInputCap() throws {
        let budget = MemoryBudget(limit: 1 << 30)
        let harness = GRPCSessionHarness(limits: Self.smallLimits, memoryBudget: budget)
        // Each stream sends 50 000 bytes of a 60 000-byte message: 3 fit under the cap of
        // 2 × 64 KiB + 64 KiB, the 4th passes it.
        let message = GRPCSessionHarness.frame(Self.echo([UInt8](repeating: 7, count: 60_000)))
        let partial = Array(message.prefix(50_005))
        var ids: [Int32] = []
        for _ in 0..<4 {
            ids.append(
                harness.send(headers: GRPCSessionHarness.headers(path: Self.echoPath), body: partial, endStream: false))
        }
        for id in ids.prefix(3) { #expect(!harness.response(id).ended) }
        try Self.expectTrailersOnly(harness.response(ids[3]), .resourceExhausted, reason: "ERR_OVERLOADED")
        #expect(budget.inUse(.inbound) == 3 * 50_005)

        harness.client.send(streamID: ids[0], bytes: Array(message.dropFirst(50_005)), endStream: true)
        harness.pump()
        let completed = harness.response(ids[0])
        #expect(completed.grpcStatus == 0)
        #expect(try Self.decoded(EchoResponse.self, completed).first?.payload.count == 60_000)
        #expect(budget.inUse(.inbound) == 2 * 50_005)

        harness.client.reset(streamID: ids[1])
        harness.client.reset(streamID: ids[2])
        harness.pump()
        #expect(budget.inUse(.inbound) == 0)
        #expect(harness.core.liveCallCount == 0)
    }

    @Test(
        "whole request messages held for END_STREAM count too: streams that withhold it pass the cap and are refused")
    func bufferedWholeMessagesCap() throws {
        let budget = MemoryBudget(limit: 1 << 30)
        let harness = GRPCSessionHarness(limits: Self.smallLimits, memoryBudget: budget)
        // Whole 60 000-byte messages, each stream's END_STREAM withheld: the session holds every
        // one until the request ends, so they count against the cap as incomplete ones do.
        let message = GRPCSessionHarness.frame(Self.echo([UInt8](repeating: 7, count: 60_000)))
        let held = message.count - 5
        var ids: [Int32] = []
        for _ in 0..<4 {
            ids.append(
                harness.send(headers: GRPCSessionHarness.headers(path: Self.echoPath), body: message, endStream: false))
        }
        for id in ids.prefix(3) { #expect(!harness.response(id).ended) }
        try Self.expectTrailersOnly(harness.response(ids[3]), .resourceExhausted, reason: "ERR_OVERLOADED")
        #expect(budget.inUse(.inbound) == 3 * held)

        harness.client.send(streamID: ids[0], bytes: [], endStream: true)
        harness.pump()
        #expect(harness.response(ids[0]).grpcStatus == 0)
        #expect(budget.inUse(.inbound) == 2 * held, "a started call's request is no longer held")
        harness.client.reset(streamID: ids[1])
        harness.client.reset(streamID: ids[2])
        harness.pump()
        #expect(budget.inUse(.inbound) == 0)
    }

    @Test("connectionClosed ends live calls (their termination handlers run) and releases the budget")
    func connectionClosed() throws {
        let budget = MemoryBudget(limit: 1 << 30)
        let harness = GRPCSessionHarness(limits: Self.smallLimits, memoryBudget: budget)
        let follow = harness.start(path: TestService.follow.path, message: Self.echo([]))
        let park = harness.start(path: TestService.park.path, message: Self.echo([1]))
        harness.runWorkers()
        #expect(harness.service.parkedCount == 1)
        let partial = Array(GRPCSessionHarness.frame(Self.echo([UInt8](repeating: 1, count: 1000))).prefix(500))
        harness.send(headers: GRPCSessionHarness.headers(path: Self.echoPath), body: partial, endStream: false)
        #expect(budget.inUse(.inbound) == 500)
        #expect(harness.core.liveCallCount == 3)

        harness.core.connectionClosed()
        #expect(harness.service.termination(of: UInt32(follow)) == .connectionClosed)
        #expect(harness.service.termination(of: UInt32(park)) == .connectionClosed)
        #expect(budget.inUse(.inbound) == 0)
        #expect(harness.core.liveCallCount == 0)
        #expect(!harness.core.hasCallsToEnd)
        #expect(harness.core.closeRequested)
    }

    // MARK: Drain

    @Test("beginDrain: GOAWAY, an open stream told to end (UNAVAILABLE with last_seq), a new stream refused")
    func drain() throws {
        let harness = GRPCSessionHarness()
        let follow = harness.start(path: TestService.follow.path, message: Self.echo([]))
        let watch = harness.start(
            path: Grpc_Health_V1_HealthMethods.watch.path,
            message: Grpc_Health_V1_HealthCheckRequest(service: "").serializedBytes())
        #expect(harness.core.liveCallCount == 2)
        harness.beginDrain()
        try #require(harness.goaways.count == 1)
        #expect(harness.goaways[0].lastStreamID == watch)
        #expect(harness.goaways[0].errorCode == 0)

        let followed = harness.response(follow)
        #expect(followed.ended && !followed.trailersOnly)
        #expect(try followed.messages().count == 1)
        #expect(followed.grpcStatus == Int(StatusCode.unavailable.rawValue))
        #expect(try followed.errorInfo().metadata == ["last_seq": "1"])
        #expect(harness.service.termination(of: UInt32(follow)) == .draining)

        let watched = harness.response(watch)
        #expect(
            try Self.decoded(Grpc_Health_V1_HealthCheckResponse.self, watched).map(\.status) == [.serving, .notServing])
        #expect(watched.grpcStatus == Int(StatusCode.unavailable.rawValue))
        #expect(harness.core.liveCallCount == 0)
        #expect(harness.core.closeRequested, "the connection closes once its calls have ended")

        let late = harness.start(path: Self.echoPath, message: Self.echo([1]))
        #expect(harness.response(late).headers.isEmpty, "a stream after GOAWAY is not served")
        #expect(harness.response(late).body.isEmpty)
    }

    @Test("a request already on its way when the drain begins is not processed: the client sees REFUSED_STREAM")
    func drainRefusesLateStream() throws {
        let harness = GRPCSessionHarness()
        let follow = harness.start(path: TestService.follow.path, message: Self.echo([]))
        let late = harness.client.request(
            headers: GRPCSessionHarness.headers(path: Self.echoPath), body: GRPCSessionHarness.frame(Self.echo([1])))
        let lateBytes = harness.client.output()
        _ = harness.core.beginDrain()
        _ = lateBytes.withUnsafeBytes { harness.core.receive($0) }
        harness.pump()
        #expect(harness.goaways.map(\.lastStreamID) == [follow])
        #expect(harness.response(follow).grpcStatus == Int(StatusCode.unavailable.rawValue))
        let refused = harness.response(late)
        #expect(refused.headers.isEmpty && refused.body.isEmpty)
        #expect(refused.closed == 7, "REFUSED_STREAM: the client may retry it elsewhere")
        #expect(harness.core.liveCallCount == 0)
        #expect(harness.core.closeRequested)
    }

    // MARK: Not gRPC

    @Test("an HTTP/1 request line: an HTTP/1.1 505 text answer, no HTTP/2, and close")
    func http1() {
        let harness = GRPCSessionHarness()
        let answer = String(
            decoding: harness.receiveRaw(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)), as: UTF8.self)
        #expect(answer.hasPrefix("HTTP/1.1 505 HTTP Version Not Supported\r\n"))
        #expect(answer.contains("content-type: text/plain\r\n"))
        #expect(answer.contains("connection: close\r\n"))
        let body = answer.split(separator: "\r\n\r\n", maxSplits: 1).last.map(String.init) ?? ""
        #expect(answer.contains("content-length: \(body.utf8.count)\r\n"))
        #expect(body.contains("HTTP/2"))
        #expect(harness.core.closeRequested)
        #expect(harness.lastActions.close)
        #expect(!harness.core.hasPendingOutput)
    }

    @Test(
        "not gRPC: a GET is HTTP 405, a wrong content-type HTTP 415, each with a text body and no grpc-status",
        arguments: [("GET", "application/grpc", "405"), ("POST", "application/json", "415")])
    func httpRefusals(_ method: String, _ contentType: String, _ status: String) {
        let harness = GRPCSessionHarness()
        var headers = GRPCSessionHarness.headers(path: Self.echoPath).filter {
            $0.name != ":method" && $0.name != "content-type"
        }
        headers.insert(HTTP2Header(":method", method), at: 0)
        headers.append(HTTP2Header("content-type", contentType))
        let id = harness.send(headers: headers, body: method == "GET" ? nil : GRPCSessionHarness.frame([1]))
        let response = harness.response(id)
        #expect(response.httpStatus == status)
        #expect(response.headers.first(named: "content-type") == "text/plain")
        #expect(response.ended)
        #expect(response.trailers.first(named: "grpc-status") == nil)
        #expect(String(decoding: response.body, as: UTF8.self).contains(method == "GET" ? "POST" : "application/grpc"))
        #expect(harness.core.liveCallCount == 0)
        #expect(!harness.core.closeRequested, "one refused stream does not end the connection")
    }

    // MARK: Reflection

    @Test("reflection list_services through the session: a v1 request in, the served services out")
    func reflectionListServices() throws {
        let harness = GRPCSessionHarness()
        var request = Grpc_Reflection_V1_ServerReflectionRequest()
        request.messageRequest = .listServices("")
        let response = harness.call(
            path: Grpc_Reflection_V1_ServerReflectionMethods.serverReflectionInfo.path,
            message: request.serializedBytes())
        #expect(response.grpcStatus == 0, "\(response.trailers)")
        let answers = try Self.decoded(Grpc_Reflection_V1_ServerReflectionResponse.self, response)
        try #require(answers.count == 1)
        guard case .listServicesResponse(let list)? = answers[0].messageResponse else {
            Issue.record("\(answers[0])")
            return
        }
        #expect(list.service.map(\.name) == harness.reflectedServices)
        #expect(list.service.map(\.name).contains("grpc.health.v1.Health"))
        #expect(list.service.map(\.name).contains(TestService.name))
    }
}
