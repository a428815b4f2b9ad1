import ProtoBridge
import RPCCore
import RPCMessages
import TestSupport
import Testing

/// What a session does against hostile input, with no socket: HELLO's own small
/// limit, the frame timeout, backpressure inside one batch of frames, calls refused when the
/// memory budget is spent, the per-app connection cap, and failed handshakes kept out of the log.
@Suite("ServerSession: hostile input (HELLO limit, frame timeout, backpressure, budget, caps, throttle)")
struct ServerSessionHostileInputTests {
    @Test(
        "a HELLO (or any frame before HELLO) over its small limit is refused from its header alone",
        arguments: [FrameType.hello.rawValue, FrameType.call.rawValue, 0x80] as [UInt8])
    func oversizedHelloHeader(type: UInt8) throws {
        let harness = SessionHarness()
        // Only the preface and the 12 header bytes: the 4 MiB never come.
        harness.receive(Preface.bytes + Frames.raw(type: type, length: 4 << 20))
        let goaway = try harness.expectGoawayAndClose()
        let status = try #require(goaway.status)
        #expect(status.code == StatusCode.resourceExhausted.rawValue)
        #expect(status.errorCode == RuntimeErrorCode.messageTooLarge.name)
        #expect(status.message.contains("4194304") && status.message.contains("\(ServerLimits().maxHelloBytes)"))
    }

    @Test("a HELLO at exactly its limit is waited for, then read")
    func helloAtItsLimit() throws {
        let harness = SessionHarness()
        let limit = ServerLimits().maxHelloBytes
        harness.receive(Preface.bytes + Frames.raw(type: FrameType.hello.rawValue, length: UInt32(limit)))
        #expect(try harness.frames().isEmpty)
        #expect(!harness.core.closeRequested)
        #expect(harness.needed == FrameHeader.size + limit)
    }

    @Test("half a frame that stalls gets GOAWAY DEADLINE_EXCEEDED once the frame timeout passes, not before")
    func frameTimeout() throws {
        var limits = ServerLimits()
        limits.frameTimeoutMs = 2_000
        let harness = SessionHarness(limits: limits)
        try harness.handshake()
        let call = Frames.echo(streamID: 1, [UInt8](repeating: 7, count: 1_000))
        harness.receive(Array(call.prefix(500)))
        harness.clock.advance(ms: 1_999)
        _ = harness.core.tick(now: harness.clock.now)
        #expect(try harness.frames().isEmpty && !harness.core.closeRequested)
        harness.clock.advance(ms: 1)
        _ = harness.core.tick(now: harness.clock.now)
        let status = try #require(try harness.expectGoawayAndClose().status)
        #expect(status.code == StatusCode.deadlineExceeded.rawValue)
        #expect(status.message.contains("2000 ms"))
    }

    @Test("the frame timeout runs from the frame's start: bytes that do not complete it do not reset it")
    func frameTimeoutFromTheStart() throws {
        var limits = ServerLimits()
        limits.frameTimeoutMs = 2_000
        let harness = SessionHarness(limits: limits)
        try harness.handshake()
        let call = Frames.echo(streamID: 1, [UInt8](repeating: 7, count: 1_000))
        harness.receive(Array(call[0..<300]))
        harness.clock.advance(ms: 1_500)
        harness.receive(Array(call[300..<600]))
        harness.clock.advance(ms: 500)
        _ = harness.core.tick(now: harness.clock.now)
        #expect(try harness.expectGoawayAndClose().status?.code == StatusCode.deadlineExceeded.rawValue)
    }

    @Test("a frame that completes in time stops the frame timeout; the next partial one starts its own")
    func frameCompletedInTime() throws {
        var limits = ServerLimits()
        limits.frameTimeoutMs = 2_000
        let harness = SessionHarness(limits: limits)
        try harness.handshake()
        let first = Frames.echo(streamID: 1, [1])
        let second = Frames.echo(streamID: 3, [UInt8](repeating: 2, count: 1_000))
        harness.receive(Array(first.prefix(10)))
        harness.clock.advance(ms: 1_500)
        harness.receive(Array(first.dropFirst(10)) + Array(second.prefix(100)))
        #expect(try harness.frames().count == 1, "the first Echo is answered")
        harness.clock.advance(ms: 1_500)
        _ = harness.core.tick(now: harness.clock.now)
        #expect(!harness.core.closeRequested, "the second frame began 1.5 s ago")
        harness.receive(Array(second.dropFirst(100)))
        harness.clock.advance(ms: 5_000)
        _ = harness.core.tick(now: harness.clock.now)
        #expect(!harness.core.closeRequested, "nothing is partial any more")
        #expect(try harness.frames().count == 1)
    }

    /// A CALL of a method the server does not have, with a long path: the session writes its
    /// error REPLY (a few KiB, naming the path) straight into its output, as the loop's inline
    /// handlers do.
    static func unknownCall(streamID: UInt32) -> [UInt8] {
        Frames.call(streamID: streamID, method: "/no.such/" + String(repeating: "x", count: 4_000))
    }

    @Test("frames the transport holds back for backpressure do not run the frame timeout")
    func heldBackInputIsNotLate() throws {
        var limits = ServerLimits()
        limits.frameTimeoutMs = 1_000
        let harness = SessionHarness(limits: limits)
        try harness.handshake()
        var calls: [UInt8] = []
        for index in 0..<4 { calls += Self.unknownCall(streamID: UInt32(2 * index + 1)) }
        harness.receive(calls, outboundLimit: 0)
        #expect(harness.unconsumed == calls.count / 4 * 3)
        harness.clock.advance(ms: 10_000)
        _ = harness.core.tick(now: harness.clock.now)
        #expect(!harness.core.closeRequested)
    }

    @Test("the session stops taking frames, mid-batch, as soon as its output passes the transport's limit")
    func backpressureInsideOneBatch() throws {
        let harness = SessionHarness()
        try harness.handshake()
        let reply = try harness.reply(to: Self.unknownCall(streamID: 1))
        let replySize = FrameHeader.size + reply.payload.count
        var calls: [UInt8] = []
        for index in 1...20 { calls += Self.unknownCall(streamID: UInt32(2 * index + 1)) }
        // Two replies stay under the limit; the third passes it, and nothing more runs.
        harness.receive(calls, outboundLimit: 2 * replySize + replySize / 2)
        #expect(try harness.frames().filter { $0.type == .reply }.count == 3)
        #expect(harness.needed == 0)
        #expect(harness.unconsumed == calls.count / 20 * 17)
        // Once the output is written, the rest is taken.
        harness.receive([], outboundLimit: .max)
        #expect(try harness.frames().filter { $0.type == .reply }.count == 17)
        #expect(harness.unconsumed == 0)
    }

    @Test("with the memory budget spent, a new call gets RESOURCE_EXHAUSTED ERR_OVERLOADED and is not run")
    func budgetSpent() throws {
        let budget = MemoryBudget(limit: 1 << 20)
        let harness = SessionHarness(configure: { $0.memoryBudget = budget })
        try harness.handshake()
        #expect(try harness.reply(to: Frames.echo(streamID: 1, [1])).replyError() == nil)
        budget.reserve(2 << 20, for: .outbound)
        let error = try #require(try harness.reply(to: Frames.echo(streamID: 3, [1])).replyError())
        #expect(error.code == .resourceExhausted)
        #expect(error.errorCode == RuntimeErrorCode.overloaded.name)
        budget.release(2 << 20, for: .outbound)
        #expect(try harness.reply(to: Frames.echo(streamID: 5, [1])).replyError() == nil)
    }

    @Test("an app over its connection cap gets GOAWAY ERR_TOO_MANY_CONNECTIONS naming the app and the cap")
    func appConnectionCap() throws {
        let connections = AppConnections(limit: 2)
        func harness() -> SessionHarness { SessionHarness(configure: { $0.appConnections = connections }) }
        let first = harness()
        let second = harness()
        try first.handshake()
        try second.handshake()
        let third = harness()
        third.receive(Frames.opening())
        let status = try #require(try third.expectGoawayAndClose().status)
        #expect(status.code == StatusCode.resourceExhausted.rawValue)
        #expect(status.errorCode == RuntimeErrorCode.tooManyConnections.name)
        #expect(status.message.contains("app1") && status.message.contains("2"))
        #expect(status.details["limit"] == "2")
        // Another app is not affected, and a closed connection makes room.
        try harness().handshake(apiKey: TestApp.two.apiKey)
        third.core.connectionClosed()
        #expect(connections.count(app: "app1") == 2, "a refused connection was never counted")
        first.core.connectionClosed()
        #expect(connections.count(app: "app1") == 1)
        try harness().handshake()
    }

    @Test("wrong API keys from one address: the first few are logged, the rest only counted; a right key is not slowed")
    func throttledFailures() throws {
        let (logger, capture) = Logger.capturing(level: .info)
        let throttle = AuthenticationThrottle()
        let clock = ManualClock()
        for _ in 0..<300 {
            let harness = SessionHarness(
                clock: clock, logger: logger, peer: "10.0.0.7:5000",
                configure: { $0.authenticationThrottle = throttle })
            harness.receive(Frames.opening(apiKey: "wrong-key-1"))
            #expect(try harness.expectGoawayAndClose().status?.errorCode == RuntimeErrorCode.unauthenticated.name)
        }
        let refusals = capture.lines.filter { $0.contains("bad API key") }
        #expect(refusals.count == AuthenticationThrottle.Configuration().burst)
        let right = SessionHarness(
            clock: clock, logger: logger, peer: "10.0.0.7:5001", configure: { $0.authenticationThrottle = throttle })
        try right.handshake()
        clock.advance(ms: 10_000)
        let report = throttle.summaries(now: clock.now)
        #expect(report.addresses == [AuthenticationThrottle.Summary(address: "10.0.0.7", refused: 295)])
    }
}
