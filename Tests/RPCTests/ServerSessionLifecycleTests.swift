import ProtoBridge
import RPCCore
import RPCMessages
import TestSupport
import Testing

/// The timers (idle, keepalive) driven by `tick(now:)` on a fake clock, and graceful drain.
@Suite("ServerSession: idle, keepalive and drain")
struct ServerSessionLifecycleTests {
    /// A stream that sends one message and ignores everything, drain included.
    static let deaf = ProtoMethod<EchoRequest, EchoResponse>(
        service: "mrpc.test.v1.Deaf", name: "Ignore", serverStreaming: true)

    static func limits(idleMs: Int = 1_000, keepaliveMs: Int = 600_000, keepaliveTimeoutMs: Int = 20_000)
        -> ServerLimits
    {
        var limits = ServerLimits()
        limits.idleTimeoutMs = idleMs
        limits.keepaliveIntervalMs = keepaliveMs
        limits.keepaliveTimeoutMs = keepaliveTimeoutMs
        return limits
    }

    static func harness(_ limits: ServerLimits = limits()) throws -> SessionHarness {
        let harness = SessionHarness(limits: limits) { table in
            table.addServerStream(deaf) { _, _, stream in stream.send(EchoResponse(payload: [1])) }
        }
        try harness.handshake()
        return harness
    }

    private func tick(_ harness: SessionHarness, advancingMs ms: Int) {
        harness.clock.advance(ms: ms)
        _ = harness.core.tick(now: harness.clock.now)
    }

    // MARK: Idle

    @Test("a connection with no call and no frame for the idle timeout gets GOAWAY UNAVAILABLE and closes")
    func idleTimeout() throws {
        let harness = try Self.harness()
        tick(harness, advancingMs: 999)
        #expect(try harness.frames().isEmpty)
        #expect(!harness.core.closeRequested)
        tick(harness, advancingMs: 1)
        let status = try #require(try harness.expectGoawayAndClose().status)
        #expect(StatusCode(rawValue: status.code) == .unavailable)
        #expect(status.message.contains("idle"))
    }

    @Test("any frame, a PING included, restarts the idle timer")
    func pingKeepsAlive() throws {
        let harness = try Self.harness()
        for _ in 0..<5 {
            tick(harness, advancingMs: 800)
            harness.receive(Frames.ping())
            #expect(try harness.onlyFrame().type == .pong)
        }
        tick(harness, advancingMs: 999)
        #expect(!harness.core.closeRequested)
    }

    @Test("an idle timeout of 0 never closes")
    func idleDisabled() throws {
        let harness = try Self.harness(Self.limits(idleMs: 0))
        tick(harness, advancingMs: 86_400_000)
        #expect(!harness.core.closeRequested)
        #expect(try harness.frames().isEmpty)
    }

    @Test("a connection with a call in flight is not idle")
    func notIdleWithCall() throws {
        let harness = try Self.harness()
        harness.receive(Frames.call(streamID: 1, TestService.park, EchoRequest()))
        for _ in 0..<10 { tick(harness, advancingMs: 1_000) }
        #expect(!harness.core.closeRequested)
        #expect(try harness.frames().isEmpty)
    }

    @Test("the idle timer starts when the last call ends, not at the last inbound frame")
    func idleCountsFromLastCall() throws {
        let harness = try Self.harness()
        harness.receive(Frames.call(streamID: 1, TestService.park, EchoRequest(payload: [1])))
        harness.runWorkers()
        tick(harness, advancingMs: 5_000) // a call longer than the idle timeout
        harness.service.releaseParked()
        harness.pump()
        #expect(try harness.onlyFrame().type == .reply)
        tick(harness, advancingMs: 1)
        #expect(
            !harness.core.closeRequested,
            "closed 1 ms after the reply: the client had no chance to use the connection")
        tick(harness, advancingMs: 999)
        _ = try harness.expectGoawayAndClose()
    }

    @Test("a stream that ends on the loop itself also starts the idle timer")
    func idleCountsFromLastInlineCompletion() throws {
        let harness = try Self.harness()
        harness.receive(Frames.call(streamID: 1, Self.deaf, EchoRequest()))
        _ = try harness.frames()
        tick(harness, advancingMs: 5_000) // a stream longer than the idle timeout, the client silent
        // The stream ends on the connection's own loop, its end handed over directly.
        _ = harness.core.deliver(streamID: 1, .end(nil))
        #expect(try harness.onlyFrame().type == .trailers)
        tick(harness, advancingMs: 1)
        #expect(
            !harness.core.closeRequested,
            "closed 1 ms after the stream ended: the client had no chance to use the connection")
        tick(harness, advancingMs: 999)
        _ = try harness.expectGoawayAndClose()
    }

    // MARK: Keepalive

    @Test("with calls in flight and a quiet peer the server PINGs; an answer keeps the connection, silence closes it")
    func keepalive() throws {
        let harness = try Self.harness(Self.limits(keepaliveMs: 2_000, keepaliveTimeoutMs: 500))
        harness.receive(Frames.call(streamID: 1, TestService.follow, EchoRequest()))
        _ = try harness.frames()
        tick(harness, advancingMs: 1_999)
        #expect(try harness.frames().isEmpty)
        tick(harness, advancingMs: 1)
        let ping = try harness.onlyFrame()
        #expect(ping.type == .ping)
        #expect(ping.streamID == 0 && ping.payload.count == 8)
        tick(harness, advancingMs: 499)
        #expect(try harness.frames().isEmpty, "one PING at a time")
        harness.receive(Frames.frame(.pong, payload: ping.payload))
        tick(harness, advancingMs: 1_000)
        #expect(!harness.core.closeRequested, "the PONG answered the keepalive")

        tick(harness, advancingMs: 1_000)
        #expect(try harness.onlyFrame().type == .ping)
        tick(harness, advancingMs: 500)
        #expect(harness.core.closeRequested, "no answer within the keepalive timeout")
        #expect(harness.service.termination(of: 1) == .connectionClosed)
    }

    // MARK: Drain

    @Test(
        "drain: GOAWAY names the last stream, streams are told to end, new calls are refused, close after the last call"
    )
    func drain() throws {
        let harness = try Self.harness()
        harness.receive(Frames.call(streamID: 1, TestService.park, EchoRequest(payload: [1])))
        harness.runWorkers()
        harness.receive(Frames.call(streamID: 3, TestService.follow, EchoRequest()))
        #expect(try harness.onlyFrame().type == .message)

        _ = harness.core.beginDrain()
        harness.pump()
        let frames = try harness.frames()
        let goaway = try #require(frames.first).goaway()
        #expect(goaway.lastStreamID == 3)
        #expect(goaway.status?.code == StatusCode.unavailable.rawValue)
        #expect(goaway.status?.errorCode == "ERR_UNAVAILABLE")
        #expect(harness.service.termination(of: 3) == .draining)
        let trailers = try #require(frames.dropFirst().first).trailers()
        #expect(trailers.code == StatusCode.unavailable.rawValue)
        #expect(trailers.details["last_seq"] == "1")
        #expect(!harness.core.closeRequested, "the unary call is still running")

        let refused = try harness.reply(to: Frames.echo(streamID: 5, [5])).reply().status
        #expect(StatusCode(rawValue: refused.code) == .unavailable)

        harness.service.releaseParked()
        harness.pump()
        let last = try harness.onlyFrame()
        #expect(last.streamID == 1)
        #expect(try last.reply().status.code == 0, "calls up to the GOAWAY's last stream complete normally")
        #expect(harness.core.closeRequested)
    }

    @Test("drain of a connection with no calls sends GOAWAY and closes at once")
    func drainIdle() throws {
        let harness = try Self.harness()
        _ = try harness.reply(to: Frames.echo(streamID: 4, [1]))
        _ = harness.core.beginDrain()
        let goaway = try harness.expectGoawayAndClose()
        #expect(goaway.lastStreamID == 4)
        _ = harness.core.beginDrain()
        #expect(try harness.frames().isEmpty, "a second drain sends nothing")
    }

    @Test("drain before HELLO closes without a GOAWAY")
    func drainBeforeHello() throws {
        let harness = SessionHarness()
        harness.receive(Preface.bytes)
        _ = harness.core.beginDrain()
        #expect(harness.core.closeRequested)
        #expect(try harness.frames().isEmpty)
    }

    @Test("drain: a CANCEL of the last call in flight lets the connection close")
    func drainThenCancel() throws {
        let harness = try Self.harness()
        harness.receive(Frames.call(streamID: 1, TestService.park, EchoRequest()))
        harness.runWorkers()
        _ = harness.core.beginDrain()
        _ = try harness.frames()
        harness.receive(Frames.cancel(streamID: 1))
        #expect(harness.core.liveCallCount == 0)
        #expect(harness.core.closeRequested, "nothing is left to finish")
    }

    @Test("drain: a deadline ending the last call lets the connection close")
    func drainThenDeadline() throws {
        let harness = try Self.harness()
        harness.receive(Frames.call(streamID: 1, TestService.park, EchoRequest(), timeoutMs: 100))
        harness.runWorkers()
        _ = harness.core.beginDrain()
        _ = try harness.frames()
        harness.clock.advance(ms: 100)
        _ = harness.core.expireDeadlines(now: harness.clock.now)
        #expect(try harness.onlyFrame().reply().status.code == StatusCode.deadlineExceeded.rawValue)
        #expect(harness.core.closeRequested)
    }

    @Test("after the grace period, streams that did not end get TRAILERS UNAVAILABLE")
    func forceEndStreams() throws {
        let harness = try Self.harness()
        harness.receive(Frames.call(streamID: 1, Self.deaf, EchoRequest()))
        _ = try harness.frames()
        _ = harness.core.beginDrain()
        #expect(try harness.onlyFrame().type == .goaway)
        #expect(!harness.core.closeRequested)
        _ = harness.core.forceEndStreams()
        let trailers = try harness.onlyFrame()
        #expect(trailers.streamID == 1)
        #expect(try trailers.trailers().code == StatusCode.unavailable.rawValue)
        #expect(harness.core.closeRequested)
    }

    @Test("when the connection is gone every call is terminated and late replies are dropped")
    func connectionClosed() throws {
        let harness = try Self.harness()
        harness.receive(Frames.call(streamID: 1, TestService.park, EchoRequest()))
        harness.receive(Frames.call(streamID: 2, TestService.follow, EchoRequest()))
        harness.runWorkers()
        _ = try harness.frames()
        harness.core.connectionClosed()
        #expect(harness.service.termination(of: 1) == .connectionClosed)
        #expect(harness.service.termination(of: 2) == .connectionClosed)
        #expect(harness.core.liveCallCount == 0)
        harness.service.releaseParked()
        harness.service.send(on: 2, seq: 2)
        harness.pump()
        tick(harness, advancingMs: 10_000)
        #expect(try harness.frames().isEmpty)
    }

    @Test("a closed connection's calls end a slice at a time, every one of them exactly once")
    func closedCallsEndInSlices() throws {
        let harness = try Self.harness()
        let streams = 2 * ConnectionCore.callsEndedAtOnce + 5
        for index in 0..<streams {
            harness.receive(Frames.call(streamID: UInt32(2 * index + 1), TestService.follow, EchoRequest()))
        }
        harness.runWorkers()
        _ = try harness.frames()
        func ended() -> Int {
            (0..<streams).filter { harness.service.termination(of: UInt32(2 * $0 + 1)) == .connectionClosed }.count
        }
        harness.core.connectionClosed()
        #expect(harness.core.liveCallCount == 0)
        #expect(ended() == ConnectionCore.callsEndedAtOnce)
        #expect(harness.core.hasCallsToEnd)
        #expect(harness.core.endClosedCalls(limit: ConnectionCore.callsEndedAtOnce) == ConnectionCore.callsEndedAtOnce)
        #expect(ended() == 2 * ConnectionCore.callsEndedAtOnce)
        #expect(harness.core.endClosedCalls(limit: 100) == 5)
        #expect(!harness.core.hasCallsToEnd)
        #expect(harness.core.endClosedCalls(limit: 100) == 0)
        #expect(ended() == streams)
    }
}
