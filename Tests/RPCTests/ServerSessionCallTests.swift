import ProtoBridge
import RPCCore
import RPCMessages
import TestSupport
import Testing

/// Calls on an open session: replies and their statuses, limits, PING, extensions, CANCEL,
/// deadlines, streams and compression — with no socket.
@Suite("ServerSession: calls")
struct ServerSessionCallTests {
    static var smallLimits: ServerLimits {
        var limits = ServerLimits()
        limits.maxMessageBytes = 64 * 1024
        limits.maxConcurrentCalls = 2
        return limits
    }

    @Test("Echo gets REPLY OK with the response body, on the call's stream")
    func echo() throws {
        let harness = SessionHarness()
        try harness.handshake()
        let reply = try harness.reply(to: Frames.echo(streamID: 7, [1, 2, 3]))
        #expect(reply.streamID == 7)
        let (status, body) = try reply.reply()
        #expect(status.code == 0)
        #expect(try EchoResponse(serializedBytes: body).payload == [1, 2, 3])
        #expect(harness.core.liveCallCount == 0)
    }

    struct Rejection: Sendable, CustomTestStringConvertible {
        let name: String
        let call: [UInt8]
        let code: StatusCode
        let errorCode: String
        let mentions: String
        var testDescription: String { name }
    }

    static let rejections: [Rejection] = [
        Rejection(
            name: "unknown method", call: Frames.call(streamID: 1, method: "/no.Such/Method"),
            code: .unimplemented, errorCode: "ERR_UNIMPLEMENTED", mentions: "/no.Such/Method"),
        Rejection(
            name: "empty method", call: Frames.call(streamID: 1, method: ""),
            code: .unimplemented, errorCode: "ERR_UNIMPLEMENTED", mentions: "empty method"),
        Rejection(
            name: "garbage CallHeader", call: Frames.call(streamID: 1, headerBytes: Frames.garbageProtobuf, body: []),
            code: .invalidArgument, errorCode: "ERR_INVALID_ARGUMENT", mentions: "mrpc.v1.CallHeader"),
        Rejection(
            name: "garbage body",
            call: Frames.call(streamID: 1, method: DiagnosticsMethods.echo.path, body: Frames.garbageProtobuf),
            code: .invalidArgument, errorCode: "ERR_INVALID_ARGUMENT", mentions: "mrpc.diagnostics.v1.EchoRequest"),
        Rejection(
            name: "CallHeader over 8 KiB",
            call: Frames.call(
                streamID: 1,
                headerBytes: CallHeader(
                    method: DiagnosticsMethods.echo.path,
                    metadata: ["pad": String(repeating: "x", count: 9_000)]
                ).serializedBytes(),
                body: []),
            code: .resourceExhausted, errorCode: "ERR_MESSAGE_TOO_LARGE", mentions: "header"),
        Rejection(
            name: "body over the message limit",
            call: Frames.echo(streamID: 1, [UInt8](repeating: 1, count: 70_000)),
            code: .resourceExhausted, errorCode: "ERR_MESSAGE_TOO_LARGE", mentions: "65536"),
        Rejection(
            name: "compressed body inflating past the limit (a bomb)",
            call: Frames.call(
                streamID: 1, method: DiagnosticsMethods.echo.path, body: DeflateSamples.zeros(count: 1 << 20),
                compressed: true),
            code: .resourceExhausted, errorCode: "ERR_MESSAGE_TOO_LARGE", mentions: "inflates"),
        Rejection(
            name: "compressed body that is not deflate data",
            call: Frames.call(
                streamID: 1, method: DiagnosticsMethods.echo.path, body: [0xFF, 0xFF, 0xFF, 0xFF], compressed: true),
            code: .invalidArgument, errorCode: "ERR_BAD_ENCODING", mentions: "deflate"),
    ]

    @Test(
        "a call the server cannot run gets a REPLY with a clear status, and the connection stays usable",
        arguments: rejections)
    func rejected(_ rejection: Rejection) throws {
        let harness = SessionHarness(limits: Self.smallLimits)
        try harness.handshake()
        let reply = try harness.reply(to: rejection.call)
        #expect(reply.streamID == 1)
        let (status, body) = try reply.reply()
        #expect(StatusCode(rawValue: status.code) == rejection.code)
        #expect(status.errorCode == rejection.errorCode)
        #expect(status.message.contains(rejection.mentions), "message: \(status.message)")
        #expect(body.isEmpty)
        #expect(!harness.core.closeRequested)
        #expect(harness.core.liveCallCount == 0)
        let next = try harness.reply(to: Frames.echo(streamID: 2, [42])).reply()
        #expect(next.status.code == 0)
    }

    @Test("a compressed request body is inflated before decoding")
    func compressedRequest() throws {
        let harness = SessionHarness()
        try harness.handshake()
        let payload = [UInt8](repeating: 0x61, count: 5_000)
        let body = DeflateSamples.independent(EchoRequest(payload: payload).serializedBytes())
        let reply = try harness.reply(
            to: Frames.call(streamID: 1, method: DiagnosticsMethods.echo.path, body: body, compressed: true))
        #expect(try EchoResponse(serializedBytes: reply.reply().body).payload == payload)
    }

    @Test("calls over the advertised limit get RESOURCE_EXHAUSTED ERR_TOO_MANY_CALLS; a finished call frees its slot")
    func tooManyCalls() throws {
        let harness = SessionHarness(limits: Self.smallLimits)
        #expect(try harness.handshake().maxConcurrentCalls == 2)
        harness.receive(Frames.call(streamID: 1, TestService.park, EchoRequest(payload: [1])))
        harness.receive(Frames.call(streamID: 2, TestService.park, EchoRequest(payload: [2])))
        #expect(harness.core.liveCallCount == 2)
        let refused = try harness.reply(to: Frames.echo(streamID: 3, [3])).reply().status
        #expect(StatusCode(rawValue: refused.code) == .resourceExhausted)
        #expect(refused.errorCode == "ERR_TOO_MANY_CALLS")
        #expect(refused.message.contains("2"))
        #expect(!harness.core.closeRequested)

        harness.runWorkers()
        #expect(harness.service.releaseParked() == 2)
        harness.pump()
        let replies = try harness.frames()
        #expect(replies.map(\.streamID).sorted() == [1, 2])
        #expect(try harness.reply(to: Frames.echo(streamID: 4, [4])).reply().status.code == 0)
    }

    @Test("PING gets PONG with the same 8 bytes")
    func pingPong() throws {
        let harness = SessionHarness()
        try harness.handshake()
        let token: [UInt8] = [9, 8, 7, 6, 5, 4, 3, 2]
        harness.receive(Frames.ping(token))
        let pong = try harness.onlyFrame()
        #expect(pong.type == .pong)
        #expect(pong.streamID == 0)
        #expect(pong.payload == token)
    }

    @Test("extension frame types 0x80–0xFF are ignored, whatever they carry", arguments: [0x80, 0xA5, 0xFF] as [UInt8])
    func extensionFramesIgnored(type: UInt8) throws {
        let harness = SessionHarness()
        try harness.handshake()
        harness.receive(
            Frames.raw(
                type: type, flags: 0xFF, reserved: 0xBEEF, streamID: 77, payload: [UInt8](repeating: 0xEE, count: 100)))
        #expect(try harness.frames().isEmpty)
        #expect(!harness.core.closeRequested)
        #expect(try harness.reply(to: Frames.echo(streamID: 1, [1])).reply().status.code == 0)
    }

    @Test("CANCEL ends a call in flight: its handler is told, and its late reply is not sent")
    func cancel() throws {
        let harness = SessionHarness()
        try harness.handshake()
        harness.receive(Frames.call(streamID: 1, TestService.park, EchoRequest(payload: [1])))
        harness.runWorkers()
        harness.receive(Frames.cancel(streamID: 1))
        #expect(harness.service.termination(of: 1) == .cancelled)
        #expect(harness.core.liveCallCount == 0)
        harness.service.releaseParked()
        harness.pump()
        #expect(try harness.frames().isEmpty, "no reply after CANCEL")
        // CANCEL of a call that does not exist (finished, or never started) is ignored.
        harness.receive(Frames.cancel(streamID: 1) + Frames.cancel(streamID: 50))
        #expect(try harness.frames().isEmpty)
        #expect(!harness.core.closeRequested)
    }

    @Test("a call past its deadline gets DEADLINE_EXCEEDED once; the handler's late reply is dropped")
    func deadline() throws {
        let harness = SessionHarness()
        try harness.handshake()
        let start = harness.clock.now
        harness.receive(Frames.call(streamID: 1, TestService.park, EchoRequest(payload: [1]), timeoutMs: 250))
        let armed = try #require(harness.deadlines.first)
        #expect(armed.streamID == 1)
        #expect(armed.deadline == start + 250_000_000)
        harness.runWorkers()
        harness.clock.advance(ms: 250)
        _ = harness.core.expireDeadlines(now: harness.clock.now)
        let status = try harness.onlyFrame().reply().status
        #expect(StatusCode(rawValue: status.code) == .deadlineExceeded)
        #expect(status.errorCode == "ERR_DEADLINE_EXCEEDED")
        #expect(harness.service.termination(of: 1) == .deadlineExceeded)
        harness.service.releaseParked()
        harness.pump()
        _ = harness.core.expireDeadlines(now: harness.clock.now)
        #expect(try harness.frames().isEmpty, "one reply per call")
    }

    @Test("a call whose deadline passed while it waited for a worker is not run")
    func deadlinePassedBeforeRunning() throws {
        let harness = SessionHarness()
        try harness.handshake()
        harness.receive(
            Frames.call(
                streamID: 1, TestService.sleep, EchoRequest(payload: TestService.sleepPayload(ms: 0)), timeoutMs: 10))
        harness.clock.advance(ms: 11)
        #expect(harness.runWorkers() == 1)
        let status = try harness.onlyFrame().reply().status
        #expect(StatusCode(rawValue: status.code) == .deadlineExceeded)
        #expect(status.message.contains("before the call ran"))
        #expect(harness.service.sleepRunCount == 0)
        #expect(harness.core.liveCallCount == 0)
    }

    @Test("a completed call's deadline timer does nothing")
    func deadlineAfterCompletion() throws {
        let harness = SessionHarness()
        try harness.handshake()
        _ = try harness.reply(to: Frames.echo(streamID: 1, [1], timeoutMs: 100))
        harness.clock.advance(ms: 100)
        _ = harness.core.expireDeadlines(now: harness.clock.now)
        #expect(try harness.frames().isEmpty)
    }

    @Test("a stream past its deadline ends with TRAILERS DEADLINE_EXCEEDED")
    func streamDeadline() throws {
        let harness = SessionHarness()
        try harness.handshake()
        harness.receive(Frames.call(streamID: 1, TestService.follow, EchoRequest(), timeoutMs: 100))
        #expect(try harness.onlyFrame().type == .message)
        harness.clock.advance(ms: 100)
        _ = harness.core.expireDeadlines(now: harness.clock.now)
        let trailers = try harness.onlyFrame().trailers()
        #expect(StatusCode(rawValue: trailers.code) == .deadlineExceeded)
        #expect(harness.service.termination(of: 1) == .deadlineExceeded)
        #expect(harness.service.send(on: 1, seq: 2) == .closed)
    }

    @Test("a server stream sends MESSAGE frames in order, then TRAILERS OK")
    func serverStream() throws {
        let harness = SessionHarness()
        try harness.handshake()
        harness.receive(Frames.call(streamID: 3, TestService.count, EchoRequest(payload: [5])))
        let frames = try harness.frames()
        #expect(frames.map(\.type) == [.message, .message, .message, .message, .message, .trailers])
        #expect(frames.allSatisfy { $0.streamID == 3 && !$0.header.isCompressed })
        for (index, frame) in frames.dropLast().enumerated() {
            #expect(
                try EchoResponse(serializedBytes: frame.payload).payload == TestService.streamPayload(seq: index + 1))
        }
        #expect(try frames.last?.trailers().code == 0)
        #expect(harness.core.liveCallCount == 0)
    }

    @Test(
        "a stream is compressed only when HELLO and the call both accept deflate; one context per stream",
        arguments: [(true, true), (true, false), (false, true)])
    func compressedStream(helloAccepts: Bool, callAccepts: Bool) throws {
        let harness = SessionHarness()
        try harness.handshake(acceptDeflate: helloAccepts)
        harness.receive(
            Frames.call(streamID: 1, TestService.count, EchoRequest(payload: [20]), acceptDeflate: callAccepts))
        let frames = try harness.frames()
        let messages = frames.filter { $0.type == .message }
        #expect(messages.count == 20)
        let compressed = helloAccepts && callAccepts
        #expect(messages.allSatisfy { $0.header.isCompressed == compressed })
        let inflater = Inflater()
        var wire = 0
        var plain = 0
        for (index, message) in messages.enumerated() {
            var body: [UInt8] = []
            if compressed {
                try inflater.inflateStreamMessage(message.payload, limit: 1 << 20, appendingTo: &body)
            } else {
                body = message.payload
            }
            #expect(try EchoResponse(serializedBytes: body).payload == TestService.streamPayload(seq: index + 1))
            wire += message.payload.count
            plain += body.count
        }
        if compressed {
            #expect(wire * 2 < plain, "context takeover should at least halve similar events (\(wire) vs \(plain))")
        }
    }

    @Test(
        "a large unary reply is deflated only when HELLO and the call both accept it",
        arguments: [(true, true), (true, false), (false, true)])
    func compressedReply(helloAccepts: Bool, callAccepts: Bool) throws {
        let harness = SessionHarness()
        try harness.handshake(acceptDeflate: helloAccepts)
        let payload = [UInt8](repeating: 0x62, count: 10_000)
        let call = Frames.call(
            streamID: 1, DiagnosticsMethods.echo, EchoRequest(payload: payload), acceptDeflate: callAccepts)
        let reply = try harness.reply(to: call)
        let compressed = helloAccepts && callAccepts
        #expect(reply.header.isCompressed == compressed)
        var body = try reply.reply().body
        if compressed {
            var inflated: [UInt8] = []
            try Inflater().inflateIndependent(body, limit: 1 << 20, appendingTo: &inflated)
            #expect(body.count < 1_000)
            body = inflated
        }
        #expect(try EchoResponse(serializedBytes: body).payload == payload)
    }

    @Test("a stream whose connection holds too many unwritten bytes is told .overloaded")
    func streamOverloaded() throws {
        var limits = ServerLimits()
        limits.streamPendingLimitBytes = 1_000
        let harness = SessionHarness(limits: limits)
        try harness.handshake()
        harness.receive(Frames.call(streamID: 1, TestService.follow, EchoRequest()))
        _ = try harness.frames()
        #expect(harness.service.send(on: 1, seq: 2) == .sent)
        harness.port.setPendingBytes(1_001)
        #expect(harness.service.send(on: 1, seq: 3) == .overloaded)
        harness.port.setPendingBytes(0)
        #expect(harness.service.send(on: 1, seq: 4) == .sent)
    }
}
