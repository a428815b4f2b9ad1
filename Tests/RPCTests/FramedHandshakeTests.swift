import ProtoBridge
import RPCCore
import RPCMessages
import TestSupport
import Testing

/// The preface, HELLO and HELLO_ACK, and the handshake timeout, on a connection's core with no
/// socket.
@Suite("Framed wire: preface and handshake")
struct FramedHandshakeTests {
    @Test("a preface and HELLO fed one byte at a time get one HELLO_ACK, and the core says how much it needs")
    func byteByByte() throws {
        let harness = SessionHarness()
        let opening = Frames.opening()
        for (index, byte) in opening.enumerated() {
            #expect(try harness.frames().isEmpty, "nothing may be answered before the HELLO is complete")
            harness.receive([byte])
            // The first bytes say which wire; then the preface, the frame header, the frame.
            if index < WireSniffer.decidingBytes - 1 { #expect(harness.needed == WireSniffer.decidingBytes) }
            if index >= WireSniffer.decidingBytes - 1 && index < Preface.size - 1 {
                #expect(harness.needed == Preface.size)
            }
            if index >= Preface.size && index < Preface.size + FrameHeader.size - 1 {
                #expect(harness.needed == FrameHeader.size)
            }
            if index >= Preface.size + FrameHeader.size - 1 && index < opening.count - 1 {
                #expect(harness.needed == opening.count - Preface.size)
            }
        }
        let ack = try harness.onlyFrame().helloAck()
        #expect(ack.protocolVersion == 1)
        #expect(harness.unconsumed == 0)
        #expect(harness.core.authenticatedApp == Frames.appID)
    }

    @Test("HELLO_ACK names the server and advertises the limits it enforces")
    func helloAckAdvertisesLimits() throws {
        var limits = ServerLimits()
        limits.maxMessageBytes = 123_456
        limits.maxCallHeaderBytes = 4_321
        limits.maxConcurrentCalls = 17
        limits.idleTimeoutMs = 9_999
        let harness = SessionHarness(limits: limits)
        let ack = try harness.handshake()
        #expect(ack.serverName == "test-server")
        #expect(ack.serverVersion == "9.9.9")
        #expect(ack.protocolVersion == 1)
        #expect(ack.maxMessageBytes == 123_456)
        #expect(ack.maxCallHeaderBytes == 4_321)
        #expect(ack.maxConcurrentCalls == 17)
        #expect(ack.idleTimeoutMs == 9_999)
        #expect(ack.appID == Frames.appID)
        #expect(ack.acceptEncodings.isEmpty, "the client did not offer deflate")
    }

    @Test("deflate is accepted only when the client offers it")
    func deflateNegotiation() throws {
        #expect(try SessionHarness().handshake(acceptDeflate: true).acceptEncodings == ["deflate"])
        #expect(try SessionHarness().handshake(acceptDeflate: false).acceptEncodings == [])
    }

    @Test("the key may name its app, and the app the HELLO names must own the key")
    func appScopedKeys() throws {
        let scoped = SessionHarness()
        #expect(try scoped.handshake(apiKey: "app2:key-of-app2").appID == "app2")

        let mismatch = SessionHarness()
        mismatch.receive(Preface.bytes + Frames.hello(apiKey: "key-of-app2", appID: "app1"))
        let goaway = try mismatch.expectGoawayAndClose()
        #expect(goaway.status?.errorCode == "ERR_UNAUTHENTICATED")
    }

    @Test(
        "a wrong API key gets GOAWAY UNAUTHENTICATED and the connection closes",
        arguments: ["wrong-key", "app1:wrong-key"])
    func badKey(key: String) throws {
        let harness = SessionHarness()
        harness.receive(Frames.opening(apiKey: key))
        let goaway = try harness.expectGoawayAndClose()
        let status = try #require(goaway.status)
        #expect(status.code == StatusCode.unauthenticated.rawValue)
        #expect(status.errorCode == "ERR_UNAUTHENTICATED")
        #expect(goaway.lastStreamID == 0)
        #expect(!status.message.contains(key), "the refusal must not echo the key")
        #expect(harness.core.authenticatedApp.isEmpty)
        // Whatever follows is ignored: the connection is closing.
        harness.receive(Frames.echo(streamID: 1, [1]))
        #expect(try harness.frames().isEmpty)
    }

    @Test(
        "a HELLO with no key opens the connection for the health checks only, with the tightest limits, as on gRPC"
    )
    func noKey() throws {
        var limits = ServerLimits()
        limits.handshakeTimeoutMs = 10_000
        let harness = SessionHarness(limits: limits)
        let ack = try harness.handshake(apiKey: "")
        #expect(ack.appID == "")
        #expect(ack.maxConcurrentCalls == UInt32(limits.anonymousMaxConcurrentCalls))
        #expect(ack.idleTimeoutMs == 10_000, "no more time idle than the handshake had")
        let health = try harness.reply(to: Frames.call(streamID: 1, HealthMethods.check, HealthCheckRequest()))
        #expect(try HealthCheckResponse(serializedBytes: health.reply().body).status == .serving)
        let refused = try harness.reply(to: Frames.echo(streamID: 3, [1]))
        let error = try #require(try refused.replyError())
        #expect(error.code == .unauthenticated)
        #expect(error.errorCode == "ERR_UNAUTHENTICATED")
        #expect(error.message.contains("needs an API key"))
        #expect(!harness.core.closeRequested, "a call refused, not the connection")
    }

    @Test("a HELLO that is not a protobuf Hello gets GOAWAY naming the message type")
    func garbageHello() throws {
        let harness = SessionHarness()
        harness.receive(Preface.bytes + Frames.frame(.hello, payload: Frames.garbageProtobuf))
        let status = try #require(try harness.expectGoawayAndClose().status)
        #expect(status.code == StatusCode.invalidArgument.rawValue)
        #expect(status.message.contains("mrpc.v1.Hello"))
    }

    struct BadPreface: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        let mentions: String
        var testDescription: String { name }
    }

    @Test(
        "a wrong preface gets GOAWAY ERR_PROTOCOL and the connection closes",
        arguments: [
            BadPreface(name: "wrong magic", bytes: Array("GET / HT".utf8), mentions: "preface"),
            BadPreface(
                name: "version 2", bytes: [0x4D, 0x52, 0x50, 0x43, 0x00, 0x02, 0x00, 0x00], mentions: "version 2"),
            BadPreface(
                name: "version 0", bytes: [0x4D, 0x52, 0x50, 0x43, 0x00, 0x00, 0x00, 0x00], mentions: "version 0"),
            BadPreface(
                name: "reserved bytes set", bytes: [0x4D, 0x52, 0x50, 0x43, 0x00, 0x01, 0x00, 0x01],
                mentions: "reserved"),
        ])
    func wrongPreface(_ preface: BadPreface) throws {
        let harness = SessionHarness()
        harness.receive(preface.bytes + Frames.hello())
        let goaway = try harness.expectGoawayAndClose()
        let status = try #require(goaway.status)
        #expect(status.errorCode == "ERR_PROTOCOL")
        #expect(status.code == StatusCode.invalidArgument.rawValue)
        #expect(status.message.contains(preface.mentions))
        #expect(harness.unconsumed == 0)
    }

    @Test(
        "a frame longer than the limit is refused from its header alone, before or after HELLO",
        arguments: [false, true])
    func oversizedFrameHeader(afterHello: Bool) throws {
        var limits = ServerLimits()
        limits.maxMessageBytes = 64 * 1024
        let harness = SessionHarness(limits: limits)
        if afterHello { try harness.handshake() } else { harness.receive(Preface.bytes) }
        // Only the 12 header bytes: the payload never comes.
        harness.receive(
            Frames.raw(type: FrameType.call.rawValue, streamID: 1, length: UInt32(limits.maxFramePayload + 1)))
        let status = try #require(try harness.expectGoawayAndClose().status)
        #expect(status.code == StatusCode.resourceExhausted.rawValue)
        #expect(status.errorCode == "ERR_MESSAGE_TOO_LARGE")
    }

    @Test("a frame exactly at the limit is waited for, not refused")
    func frameAtTheLimit() throws {
        var limits = ServerLimits()
        limits.maxMessageBytes = 64 * 1024
        let harness = SessionHarness(limits: limits)
        try harness.handshake()
        harness.receive(Frames.raw(type: FrameType.call.rawValue, streamID: 1, length: UInt32(limits.maxFramePayload)))
        #expect(try harness.frames().isEmpty)
        #expect(!harness.core.closeRequested)
        #expect(harness.needed == FrameHeader.size + limits.maxFramePayload)
    }

    @Test("no HELLO within the handshake timeout closes the connection", arguments: [0, Preface.size])
    func handshakeTimeout(bytesSent: Int) throws {
        var limits = ServerLimits()
        limits.handshakeTimeoutMs = 500
        let recorder = TransportEventRecorder()
        let harness = SessionHarness(limits: limits, configure: { $0.observer = recorder })
        harness.receive(Array(Preface.bytes.prefix(bytesSent)))
        harness.clock.advance(ms: 499)
        _ = harness.core.tick(now: harness.clock.now)
        #expect(!harness.core.closeRequested)
        #expect(recorder.events.isEmpty)
        harness.clock.advance(ms: 1)
        _ = harness.core.tick(now: harness.clock.now)
        #expect(harness.core.closeRequested)
        #expect(try harness.frames().isEmpty, "a silent peer is simply closed")
        harness.clock.advance(ms: 1_000)
        _ = harness.core.tick(now: harness.clock.now)
        #expect(recorder.events == [.handshakeRefused(.timeout, .mrpc)], "counted once for /metrics")
    }

    @Test(
        "each refused handshake is reported once, with its reason",
        arguments: [
            (Array("GET / HT".utf8), TransportEvent.handshakeRefused(.badPreface, .mrpc)),
            ([0x4D, 0x52, 0x50, 0x43, 0x00, 0x02, 0x00, 0x00], .handshakeRefused(.badPreface, .mrpc)),
            (Preface.bytes + Frames.ping(), .handshakeRefused(.badHello, .mrpc)),
            (
                Preface.bytes + Frames.frame(.hello, payload: Frames.garbageProtobuf),
                .handshakeRefused(.badHello, .mrpc)
            ),
            (Frames.opening(apiKey: "app1:wrong-key-999"), .authenticationFailed(.mrpc, logged: true)),
        ])
    func refusalsReported(bytes: [UInt8], event: TransportEvent) throws {
        let recorder = TransportEventRecorder()
        let harness = SessionHarness(configure: { $0.observer = recorder })
        harness.receive(bytes)
        #expect(harness.core.closeRequested)
        #expect(recorder.events == [event])
    }

    @Test("after HELLO the handshake timeout no longer applies")
    func handshakeTimeoutEndsAtHello() throws {
        var limits = ServerLimits()
        limits.handshakeTimeoutMs = 500
        limits.idleTimeoutMs = 0
        let harness = SessionHarness(limits: limits)
        try harness.handshake()
        harness.clock.advance(ms: 10_000)
        _ = harness.core.tick(now: harness.clock.now)
        #expect(!harness.core.closeRequested)
        #expect(try harness.frames().isEmpty)
    }
}
