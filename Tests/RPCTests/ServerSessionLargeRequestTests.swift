import ProtoBridge
import RPCCore
import RPCMessages
import TestSupport
import Testing

/// Compressed request bodies that inflate past `ServerLimits.inlineInflateBytes`: taken in on the
/// large-request pool (here the harness's manual one), one at a time per connection, the
/// connection's next frames held until then — with no socket.
@Suite("ServerSession: large compressed requests off the loop")
struct ServerSessionLargeRequestTests {
    static var limits: ServerLimits {
        var limits = ServerLimits()
        limits.inlineInflateBytes = 16 * 1024
        limits.maxMessageBytes = 256 * 1024
        return limits
    }

    static func compressedEcho(streamID: UInt32, payload: [UInt8], timeoutMs: UInt32 = 0) -> [UInt8] {
        Frames.call(
            streamID: streamID, method: DiagnosticsMethods.echo.path,
            body: DeflateSamples.independent(EchoRequest(payload: payload).serializedBytes()), timeoutMs: timeoutMs,
            compressed: true)
    }

    @Test("a body inflating past the inline limit is answered from the pool; frames after it wait for it")
    func answeredFromThePool() throws {
        let harness = SessionHarness(limits: Self.limits)
        try harness.handshake()
        let payload = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 % 251) }
        let next = Frames.echo(streamID: 3, [7])
        harness.receive(Self.compressedEcho(streamID: 1, payload: payload) + next)
        #expect(try harness.frames().isEmpty, "nothing is answered on the loop")
        #expect(harness.core.awaitsLargeRequest)
        #expect(harness.offload.count == 1)
        #expect(harness.unconsumed == next.count, "the next frame waits for the large request")

        #expect(harness.runWorkers() == 1)
        #expect(!harness.core.awaitsLargeRequest)
        let reply = try harness.onlyFrame()
        #expect(reply.streamID == 1)
        #expect(try EchoResponse(serializedBytes: reply.reply().body).payload == payload)

        harness.receive([])
        let second = try harness.onlyFrame()
        #expect(second.streamID == 3)
        #expect(try EchoResponse(serializedBytes: second.reply().body).payload == [7])
        #expect(harness.core.liveCallCount == 0)
    }

    @Test("a body within the inline limit is answered on the loop, with no pool")
    func smallStaysInline() throws {
        let harness = SessionHarness(limits: Self.limits)
        try harness.handshake()
        let payload = [UInt8](repeating: 0x61, count: 10_000)
        let reply = try harness.reply(to: Self.compressedEcho(streamID: 1, payload: payload))
        #expect(try EchoResponse(serializedBytes: reply.reply().body).payload == payload)
        #expect(harness.offload.count == 0)
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        let name: String
        let body: [UInt8]
        let code: StatusCode
        let errorCode: String
        let mentions: String
        var testDescription: String { name }
    }

    static let refusals: [Refusal] = [
        Refusal(
            name: "a bomb past the message limit", body: DeflateSamples.zeros(count: 1 << 20),
            code: .resourceExhausted, errorCode: "ERR_MESSAGE_TOO_LARGE", mentions: "262144"),
        Refusal(
            name: "deflate data that turns corrupt past the inline limit",
            body: DeflateSamples.zeros(count: 100_000) + [0xFF, 0xFF, 0xFF, 0xFF],
            code: .invalidArgument, errorCode: "ERR_BAD_ENCODING", mentions: "deflate"),
        Refusal(
            name: "a body that inflates to garbage protobuf", body: DeflateSamples.zeros(count: 100_000),
            code: .invalidArgument, errorCode: "ERR_INVALID_ARGUMENT", mentions: "EchoRequest"),
    ]

    @Test("a large body the pool cannot take in gets a clear REPLY, and the connection reads on", arguments: refusals)
    func refused(_ refusal: Refusal) throws {
        let harness = SessionHarness(limits: Self.limits)
        try harness.handshake()
        harness.receive(
            Frames.call(streamID: 1, method: DiagnosticsMethods.echo.path, body: refusal.body, compressed: true))
        #expect(harness.runWorkers() == 1)
        let status = try harness.onlyFrame().reply().status
        #expect(StatusCode(rawValue: status.code) == refusal.code)
        #expect(status.errorCode == refusal.errorCode)
        #expect(status.message.contains(refusal.mentions), "message: \(status.message)")
        #expect(!harness.core.closeRequested)
        #expect(harness.core.liveCallCount == 0)
        #expect(try harness.reply(to: Frames.echo(streamID: 2, [1])).reply().status.code == 0)
    }

    @Test("a deadline that passes while the request waits for the pool: DEADLINE_EXCEEDED, the handler not run")
    func deadlinePassesWhileWaiting() throws {
        let harness = SessionHarness(limits: Self.limits)
        try harness.handshake()
        harness.receive(Self.compressedEcho(streamID: 1, payload: [UInt8](repeating: 1, count: 50_000), timeoutMs: 5))
        harness.clock.advance(ms: 10)
        harness.runWorkers()
        let status = try harness.onlyFrame().reply().status
        #expect(StatusCode(rawValue: status.code) == .deadlineExceeded)
        #expect(status.message.contains("before the call ran"))
        #expect(!harness.core.awaitsLargeRequest)
    }

    @Test("the compressed body is counted in the memory budget while it waits for the pool")
    func countedInTheBudget() throws {
        let budget = MemoryBudget(limit: 64 << 20)
        let harness = SessionHarness(limits: Self.limits, configure: { $0.memoryBudget = budget })
        try harness.handshake()
        let call = Self.compressedEcho(streamID: 1, payload: [UInt8](repeating: 2, count: 80_000))
        harness.receive(call)
        #expect(budget.inUse(.inbound) > 0)
        #expect(budget.inUse(.inbound) < call.count)
        harness.runWorkers()
        #expect(budget.inUse(.inbound) == 0)
        #expect(try harness.onlyFrame().reply().status.code == 0)
    }

    @Test("the connection closing while the pool holds its request: the late reply is dropped")
    func closedWhileWaiting() throws {
        let harness = SessionHarness(limits: Self.limits)
        try harness.handshake()
        harness.receive(Self.compressedEcho(streamID: 1, payload: [UInt8](repeating: 3, count: 50_000)))
        harness.core.connectionClosed()
        harness.runWorkers()
        #expect(try harness.frames().isEmpty)
        #expect(harness.core.liveCallCount == 0)
    }
}
