import ProtoBridge
import RPCCore
import RPCMessages
import RPCPosix
import TestSupport
import Testing

/// Calls over real sockets, seen frame by frame: statuses for bad calls on a connection that stays
/// usable, limits, deadlines, CANCEL, PING, extensions and server streams.
@Suite("Real sockets: calls, statuses and streams")
struct CallProtocolTests {
    struct BadCall: Sendable, CustomTestStringConvertible {
        let name: String
        let frame: [UInt8]
        let code: StatusCode
        let errorCode: String
        let mentions: String
        var testDescription: String { name }
    }

    @Test(
        "a bad call gets a REPLY with a status naming the problem; the same connection then serves calls",
        arguments: [
            BadCall(
                name: "garbage CallHeader",
                frame: Frames.call(streamID: 1, headerBytes: Frames.garbageProtobuf, body: []),
                code: .invalidArgument, errorCode: "ERR_INVALID_ARGUMENT", mentions: "mrpc.v1.CallHeader"),
            BadCall(
                name: "garbage body",
                frame: Frames.call(streamID: 1, method: DiagnosticsMethods.echo.path, body: Frames.garbageProtobuf),
                code: .invalidArgument, errorCode: "ERR_INVALID_ARGUMENT", mentions: "mrpc.diagnostics.v1.EchoRequest"),
            BadCall(
                name: "unknown method", frame: Frames.call(streamID: 1, method: "/mrpc.test.v1.Test/Nope"),
                code: .unimplemented, errorCode: "ERR_UNIMPLEMENTED", mentions: "/mrpc.test.v1.Test/Nope"),
            BadCall(
                name: "deflate bomb as body (64 MiB of zeros)",
                frame: Frames.call(
                    streamID: 1, method: DiagnosticsMethods.echo.path, body: DeflateSamples.zeros(count: 64 << 20),
                    compressed: true),
                code: .resourceExhausted, errorCode: "ERR_MESSAGE_TOO_LARGE", mentions: "inflates"),
        ])
    func badCall(_ bad: BadCall) throws {
        var limits = ServerLimits()
        limits.maxMessageBytes = 1 << 20
        let server = try TestServer(limits: limits)
        defer { server.stop() }
        let (raw, _) = try server.rawOpen()
        Memory.trim()
        let before = Memory.resident
        let error = try #require(try raw.roundTrip(bad.frame, streamID: 1).replyError())
        #expect(error.code == bad.code)
        #expect(error.errorCode == bad.errorCode)
        #expect(error.message.contains(bad.mentions), "message: \(error.message)")
        let grown = Memory.resident - before
        #expect(grown < 48 << 20, "handling one bad call grew RSS by \(grown >> 20) MiB")
        let reply = try raw.roundTrip(Frames.echo(streamID: 3, [7, 7]), streamID: 3)
        #expect(try reply.replyError() == nil)
        #expect(try EchoResponse(serializedBytes: reply.reply().body).payload == [7, 7])
        try server.checkServing()
    }

    @Test("extension frames (type ≥ 0x80) are ignored; PING gets PONG with the same bytes, in order")
    func extensionsAndPing() throws {
        let server = try TestServer()
        defer { server.stop() }
        let (raw, _) = try server.rawOpen()
        var bytes = Frames.raw(type: 0x80, payload: [UInt8](repeating: 1, count: 300))
        bytes += Frames.raw(type: 0xFF, flags: 0x7E, streamID: 12, payload: [])
        let tokens: [[UInt8]] = (0..<5).map { i in (0..<8).map { UInt8(i * 8 + $0) } }
        for token in tokens { bytes += Frames.ping(token) }
        try raw.send(bytes)
        for token in tokens {
            let pong = try raw.expectFrame()
            #expect(pong.type == .pong)
            #expect(pong.payload == token)
        }
        #expect(try raw.staysQuiet(forMs: 100))
        try server.checkServing()
    }

    @Test("calls over the advertised concurrent-call limit get RESOURCE_EXHAUSTED ERR_TOO_MANY_CALLS")
    func concurrentCallLimit() throws {
        var limits = ServerLimits()
        limits.maxConcurrentCalls = 4
        let server = try TestServer(limits: limits)
        defer { server.stop() }
        let (raw, ack) = try server.rawOpen()
        #expect(ack.maxConcurrentCalls == 4)
        var calls: [UInt8] = []
        for id in stride(from: 1, through: 9, by: 2) as StrideThrough<UInt32> {
            calls += Frames.call(streamID: id, TestService.park, EchoRequest(payload: [UInt8(id)]))
        }
        try raw.send(calls)
        let refused = try raw.expectFrame()
        #expect(refused.streamID == 9)
        let error = try #require(try refused.replyError())
        #expect(error.code == .resourceExhausted)
        #expect(error.errorCode == "ERR_TOO_MANY_CALLS")
        #expect(server.service.waitForParked(4))
        #expect(server.service.releaseParked() == 4)
        var answered: [UInt32] = []
        for _ in 0..<4 {
            let reply = try raw.expectFrame()
            #expect(try reply.replyError() == nil)
            answered.append(reply.streamID)
        }
        #expect(answered.sorted() == [1, 3, 5, 7])
        #expect(
            try raw.roundTrip(Frames.echo(streamID: 11, [1]), streamID: 11).replyError() == nil,
            "the slots are free again")
        try server.checkServing()
    }

    @Test("a call still running at its deadline gets DEADLINE_EXCEEDED from the server, and nothing more")
    func serverDeadline() throws {
        let server = try TestServer()
        defer { server.stop() }
        let (raw, _) = try server.rawOpen()
        let sent = Clock.nowMs
        try raw.send(Frames.call(streamID: 1, TestService.park, EchoRequest(payload: [1]), timeoutMs: 200))
        let reply = try raw.expectFrame(timeoutMs: 3_000)
        let waited = Clock.nowMs - sent
        #expect(reply.streamID == 1)
        let error = try #require(try reply.replyError())
        #expect(error.code == .deadlineExceeded)
        #expect(error.errorCode == "ERR_DEADLINE_EXCEEDED")
        #expect(waited >= 190 && waited < 2_000, "DEADLINE_EXCEEDED after \(waited) ms for a 200 ms timeout")
        #expect(server.service.waitForTermination(of: 1) == .deadlineExceeded)
        #expect(server.service.waitForParked(1))
        server.service.releaseParked()
        try raw.send(Frames.ping())
        #expect(try raw.expectFrame().type == .pong, "no second reply for the expired call")
        #expect(try raw.staysQuiet(forMs: 100))
        try server.checkServing()
    }

    @Test("a call whose deadline passes while it waits for a busy worker is never run")
    func deadlineBeforeRunning() throws {
        let server = try TestServer(workers: 1)
        defer { server.stop() }
        let (raw, _) = try server.rawOpen()
        try raw.send(
            Frames.call(streamID: 1, TestService.sleep, EchoRequest(payload: TestService.sleepPayload(ms: 600)))
                + Frames.call(
                    streamID: 3, TestService.sleep, EchoRequest(payload: TestService.sleepPayload(ms: 0)),
                    timeoutMs: 100))
        let first = try raw.expectFrame(timeoutMs: 3_000)
        #expect(first.streamID == 3, "the waiting call's deadline fires while the worker is busy")
        #expect(try first.replyError()?.code == .deadlineExceeded)
        #expect(try raw.expectFrame(timeoutMs: 3_000).streamID == 1)
        // One worker, first in first out: once call 5 is answered, call 3's turn has come and gone.
        #expect(
            try raw.roundTrip(
                Frames.call(streamID: 5, TestService.sleep, EchoRequest(payload: TestService.sleepPayload(ms: 0))),
                streamID: 5
            ).replyError() == nil)
        #expect(server.service.sleepRunCount == 2, "the expired call must not have run")
        try server.checkServing()
    }

    @Test("CANCEL of an in-flight call: the handler is told, and no reply is ever sent for it")
    func cancelInFlight() throws {
        let server = try TestServer()
        defer { server.stop() }
        let (raw, _) = try server.rawOpen()
        try raw.send(Frames.call(streamID: 1, TestService.park, EchoRequest(payload: [1])))
        #expect(server.service.waitForParked(1))
        try raw.send(Frames.cancel(streamID: 1))
        #expect(server.service.waitForTermination(of: 1) == .cancelled)
        #expect(server.service.releaseParked() == 1)
        let reply = try raw.roundTrip(Frames.echo(streamID: 3, [3]), streamID: 3)
        #expect(try reply.replyError() == nil)
        try raw.send(Frames.ping())
        let (pong, skipped) = try raw.expectFrame(.pong)
        #expect(pong.type == .pong)
        #expect(skipped.isEmpty, "frames for a cancelled call: \(skipped)")
        #expect(try raw.staysQuiet(forMs: 150))
        try server.checkServing()
    }

    @Test("a server stream is MESSAGE frames in order, then TRAILERS OK")
    func serverStream() throws {
        let server = try TestServer()
        defer { server.stop() }
        let (raw, _) = try server.rawOpen()
        try raw.send(Frames.call(streamID: 1, TestService.count, EchoRequest(payload: [10])))
        for seq in 1...10 {
            let message = try raw.expectFrame()
            #expect(message.type == .message && message.streamID == 1 && !message.header.isCompressed)
            #expect(try EchoResponse(serializedBytes: message.payload).payload == TestService.streamPayload(seq: seq))
        }
        let trailers = try raw.expectFrame()
        #expect(try trailers.trailers().code == 0)
        #expect(trailers.streamID == 1)
        try server.checkServing()
    }

    @Test("a compressed server stream inflates message by message with one context")
    func compressedServerStream() throws {
        let server = try TestServer()
        defer { server.stop() }
        let (raw, ack) = try server.rawOpen(acceptDeflate: true)
        #expect(ack.acceptEncodings == ["deflate"])
        try raw.send(Frames.call(streamID: 1, TestService.count, EchoRequest(payload: [100]), acceptDeflate: true))
        let inflater = Inflater()
        var wire = 0
        var plain = 0
        for seq in 1...100 {
            let message = try raw.expectFrame()
            #expect(message.type == .message && message.header.isCompressed)
            var body: [UInt8] = []
            try inflater.inflateStreamMessage(message.payload, limit: 1 << 20, appendingTo: &body)
            #expect(try EchoResponse(serializedBytes: body).payload == TestService.streamPayload(seq: seq))
            wire += message.payload.count
            plain += body.count
        }
        #expect(try raw.expectFrame().trailers().code == 0)
        #expect(wire * 3 < plain, "\(wire) bytes on the wire for \(plain)")
        try server.checkServing()
    }

    @Test("the client library receives typed stream messages, compressed or not", arguments: [false, true])
    func clientStream(compressed: Bool) throws {
        let server = try TestServer()
        defer { server.stop() }
        let connection = try server.connect()
        defer { connection.close() }
        let received = Collector<[UInt8]>()
        let end = Collector<RPCError?>()
        connection.serverStream(
            TestService.count, EchoRequest(payload: [25]), options: CallOptions(acceptDeflate: compressed),
            onMessage: { received.append($0.payload) }, onEnd: { end.append($0) })
        #expect(end.waitForCount(1))
        #expect(end.items == [nil])
        #expect(received.items == (1...25).map { TestService.streamPayload(seq: $0) })

        let raw = Collector<Bool>()
        let rawEnd = Collector<RPCError?>()
        connection.stream(
            path: TestService.count.path, body: EchoRequest(payload: [3]).serializedBytes(),
            options: CallOptions(acceptDeflate: compressed),
            onMessage: { raw.append($0.compressed) }, onEnd: { rawEnd.append($0) })
        #expect(rawEnd.waitForCount(1))
        #expect(raw.items == [compressed, compressed, compressed])
        try server.checkServing()
    }
}
