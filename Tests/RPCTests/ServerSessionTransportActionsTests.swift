import ProtoBridge
import RPCCore
import RPCMessages
import TestSupport
import Testing

/// What the session asks of its transport after each event: write, close, move the deadline
/// timer. The connection does nothing else, so these are the whole contract between them.
@Suite("ServerSession: the actions it hands the transport")
struct ServerSessionTransportActionsTests {
    typealias Actions = TransportActions

    @Test("HELLO: write the HELLO_ACK, keep the connection")
    func hello() {
        let harness = SessionHarness()
        harness.receive(Frames.opening())
        #expect(harness.lastActions == Actions(write: true))
    }

    @Test("half a frame: nothing to do yet")
    func partialFrame() throws {
        let harness = SessionHarness()
        try harness.handshake()
        harness.receive(Array(Frames.ping().prefix(5)))
        #expect(harness.lastActions == Actions())
    }

    @Test("a protocol violation: write the GOAWAY, then close")
    func violation() throws {
        let harness = SessionHarness()
        try harness.handshake()
        harness.receive(Frames.raw(type: 0x0B))
        #expect(harness.lastActions == Actions(write: true, close: true))
    }

    @Test("the handshake timeout: close with nothing to write")
    func handshakeTimeout() {
        var limits = ServerLimits()
        limits.handshakeTimeoutMs = 500
        let harness = SessionHarness(limits: limits)
        harness.clock.advance(ms: 500)
        #expect(harness.core.tick(now: harness.clock.now) == Actions(close: true))
    }

    @Test("the deadline timer moves only to an earlier deadline, and to the next when it fires")
    func deadlineTimer() throws {
        let harness = SessionHarness()
        try harness.handshake()
        let start = harness.clock.now
        harness.receive(Frames.call(streamID: 1, TestService.park, EchoRequest(), timeoutMs: 250))
        #expect(harness.lastActions == Actions(armDeadlineTimer: .init(deadline: start + 250_000_000, streamID: 1)))
        harness.receive(Frames.call(streamID: 3, TestService.park, EchoRequest(), timeoutMs: 500))
        #expect(harness.lastActions == Actions(), "a later deadline needs no timer of its own")
        harness.receive(Frames.call(streamID: 5, TestService.park, EchoRequest(), timeoutMs: 100))
        #expect(harness.lastActions == Actions(armDeadlineTimer: .init(deadline: start + 100_000_000, streamID: 5)))

        harness.clock.advance(ms: 100)
        let fired = harness.core.expireDeadlines(now: harness.clock.now)
        #expect(fired == Actions(write: true, armDeadlineTimer: .init(deadline: start + 250_000_000, streamID: 1)))
        #expect(try harness.onlyFrame().streamID == 5)
    }

    @Test("drain: write the GOAWAY and keep the connection while a call runs; close after its reply")
    func drain() throws {
        let harness = SessionHarness()
        try harness.handshake()
        harness.receive(Frames.call(streamID: 1, TestService.park, EchoRequest()))
        harness.runWorkers()
        #expect(harness.core.beginDrain() == Actions(write: true))
        _ = try harness.frames()
        harness.service.releaseParked()
        harness.pump()
        #expect(harness.lastActions == Actions(write: true, close: true))
    }

    @Test("a second drain, or one after the close was asked for, writes nothing more")
    func noSecondGoaway() throws {
        let harness = SessionHarness()
        try harness.handshake()
        harness.receive(Frames.raw(type: 0x0B))
        _ = try harness.frames()
        #expect(harness.core.beginDrain() == Actions(close: true))
        #expect(try harness.frames().isEmpty)
    }
}
