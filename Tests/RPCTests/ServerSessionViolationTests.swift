import ProtoBridge
import RPCCore
import RPCMessages
import TestSupport
import Testing

/// Every way a client can break the frame stream: each gets GOAWAY with INVALID_ARGUMENT /
/// ERR_PROTOCOL naming the last stream the server took, and the session asks to close.
@Suite("ServerSession: protocol violations")
struct ServerSessionViolationTests {
    struct Violation: Sendable, CustomTestStringConvertible {
        let name: String
        /// Sent after the preface and, when `afterHello`, after a successful HELLO.
        var afterHello = true
        /// Frames sent first (they must be accepted).
        var setup: [[UInt8]] = []
        let bytes: [UInt8]
        /// What GOAWAY must name as the last stream.
        var lastStreamID: UInt32 = 0
        /// Words the GOAWAY's message must contain.
        var mentions = ""
        var testDescription: String { name }
    }

    static let violations: [Violation] = [
        Violation(
            name: "CALL before HELLO", afterHello: false, bytes: Frames.echo(streamID: 1, [1]), mentions: "HELLO"),
        Violation(name: "PING before HELLO", afterHello: false, bytes: Frames.ping(), mentions: "HELLO"),
        Violation(name: "CANCEL before HELLO", afterHello: false, bytes: Frames.cancel(streamID: 1), mentions: "HELLO"),
        Violation(
            name: "HELLO on stream 1", afterHello: false,
            bytes: Frames.raw(type: 1, streamID: 1, payload: Hello(apiKey: Frames.apiKey).serializedBytes()),
            mentions: "stream 0"),
        Violation(
            name: "unknown type 0x0B before HELLO", afterHello: false, bytes: Frames.raw(type: 0x0B), mentions: "0xb"),
        Violation(name: "unknown type 0x0B", bytes: Frames.raw(type: 0x0B), mentions: "0xb"),
        Violation(name: "unknown type 0x7F", bytes: Frames.raw(type: 0x7F, payload: [1, 2, 3]), mentions: "0x7f"),
        Violation(name: "type 0", bytes: Frames.raw(type: 0), mentions: "unknown"),
        Violation(
            name: "reserved header field set",
            bytes: Frames.raw(type: 8, reserved: 1, payload: [UInt8](repeating: 0, count: 8)),
            mentions: "reserved"),
        Violation(
            name: "an undefined flag bit",
            bytes: Frames.raw(type: 8, flags: 0x02, payload: [UInt8](repeating: 0, count: 8)),
            mentions: "reserved"),
        Violation(
            name: "a compressed PING",
            bytes: Frames.raw(type: 8, flags: 0x01, payload: [UInt8](repeating: 0, count: 8)),
            mentions: "compressed"),
        Violation(
            name: "a compressed CANCEL", bytes: Frames.raw(type: 7, flags: 0x01, streamID: 1), mentions: "compressed"),
        Violation(name: "CALL on stream 0", bytes: Frames.echo(streamID: 0, [1]), mentions: "stream 0"),
        Violation(
            name: "CALL shorter than its header length", bytes: Frames.frame(.call, streamID: 1, payload: [0, 0]),
            mentions: "shorter"),
        Violation(
            name: "CALL header length past the frame",
            bytes: Frames.frame(.call, streamID: 1, payload: [0, 0, 0, 100] + [UInt8](repeating: 0, count: 10)),
            mentions: "100"),
        Violation(
            name: "a reused live stream id", setup: [Frames.call(streamID: 1, TestService.park, EchoRequest())],
            bytes: Frames.echo(streamID: 1, [1]), lastStreamID: 1, mentions: "already in use"),
        Violation(
            name: "a stream id lower than the last", setup: [Frames.echo(streamID: 5, [1])],
            bytes: Frames.echo(streamID: 3, [1]), lastStreamID: 5, mentions: "not greater"),
        Violation(
            name: "the id of a finished call", setup: [Frames.echo(streamID: 1, [1])],
            bytes: Frames.echo(streamID: 1, [1]), lastStreamID: 1, mentions: "not greater"),
        Violation(name: "PING with 7 bytes", bytes: Frames.ping([1, 2, 3, 4, 5, 6, 7]), mentions: "8 bytes"),
        Violation(name: "PING on stream 3", bytes: Frames.ping(streamID: 3), mentions: "stream 0"),
        Violation(name: "a second HELLO", bytes: Frames.hello(), mentions: "HELLO"),
        Violation(name: "HELLO_ACK from the client", bytes: Frames.frame(.helloAck), mentions: "HELLO_ACK"),
        Violation(
            name: "REPLY from the client", bytes: Frames.frame(.reply, streamID: 1, payload: [0, 0, 0, 0]),
            mentions: "REPLY"),
        Violation(name: "MESSAGE from the client", bytes: Frames.frame(.message, streamID: 1), mentions: "MESSAGE"),
        Violation(name: "TRAILERS from the client", bytes: Frames.frame(.trailers, streamID: 1), mentions: "TRAILERS"),
        Violation(name: "GOAWAY from the client", bytes: Frames.frame(.goaway), mentions: "GOAWAY"),
    ]

    @Test("a protocol violation gets GOAWAY ERR_PROTOCOL, then close", arguments: violations)
    func violation(_ violation: Violation) throws {
        let harness = SessionHarness()
        if violation.afterHello { try harness.handshake() } else { harness.receive(Preface.bytes) }
        for frame in violation.setup { harness.receive(frame) }
        _ = try harness.frames()
        #expect(!harness.core.closeRequested)

        // The violation and a valid call behind it, in one read: the call must not be served.
        harness.receive(violation.bytes + Frames.echo(streamID: 99, [9]))
        let frames = try harness.frames()
        let goaway = try #require(frames.last).goaway()
        #expect(frames.count == 1, "only GOAWAY may follow a violation: \(frames)")
        let status = try #require(goaway.status)
        #expect(status.code == StatusCode.invalidArgument.rawValue)
        #expect(status.errorCode == "ERR_PROTOCOL")
        #expect(status.message.contains(violation.mentions), "message: \(status.message)")
        #expect(goaway.lastStreamID == violation.lastStreamID)
        #expect(harness.core.closeRequested)
        #expect(harness.unconsumed == 0)
        #expect(harness.core.liveCallCount == 0, "a closing connection keeps no call")

        harness.receive(Frames.echo(streamID: 100, [1]))
        #expect(try harness.frames().isEmpty, "nothing more is served after GOAWAY")
    }

    @Test("a violation ends the calls in flight with connectionClosed, and their late replies are dropped")
    func violationEndsLiveCalls() throws {
        let harness = SessionHarness()
        try harness.handshake()
        harness.receive(Frames.call(streamID: 1, TestService.park, EchoRequest(payload: [1])))
        harness.runWorkers()
        #expect(harness.service.parkedCount == 1)
        harness.receive(Frames.raw(type: 0x0B))
        _ = try harness.expectGoawayAndClose()
        #expect(harness.service.termination(of: 1) == .connectionClosed)
        harness.service.releaseParked()
        harness.pump()
        #expect(try harness.frames().isEmpty)
    }
}
