import ProtoBridge
import RPCCore
import RPCMessages
import RPCPosix
import TestSupport
import Testing

/// Bad input that ends a connection, over real sockets: a wrong preface or key, frames out of
/// place, an oversized or truncated frame, a silent client. Each test then proves the server still
/// serves a fresh client.
@Suite("Real sockets: input that ends the connection")
struct ConnectionErrorTests {
    /// Reads to the close and returns the status of the one GOAWAY that must come first.
    private func goawayThenClose(_ connection: RawConnection) throws -> (goaway: Goaway, status: Status) {
        let frames = try connection.expectClose()
        #expect(frames.count == 1, "exactly one GOAWAY before the close: \(frames)")
        let goaway = try #require(frames.first).goaway()
        return (goaway, try #require(goaway.status))
    }

    @Test("a client that starts with neither wire's preface gets GOAWAY ERR_PROTOCOL and is closed")
    func wrongMagic() throws {
        let server = try TestServer()
        defer { server.stop() }
        let raw = try server.raw()
        try raw.send([0x16, 0x03, 0x01, 0x00, 0x20] + [UInt8](repeating: 7, count: 32))
        let (_, status) = try goawayThenClose(raw)
        #expect(status.errorCode == "ERR_PROTOCOL")
        #expect(status.message.contains("preface"))
        try server.checkServing()
    }

    @Test("an HTTP/1 client gets an HTTP/1.1 answer naming what the port speaks, and the connection closes")
    func http1Client() throws {
        let server = try TestServer()
        defer { server.stop() }
        let raw = try server.raw()
        try raw.send(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        let answer = String(decoding: try raw.readUntilClose(), as: UTF8.self)
        #expect(answer.hasPrefix("HTTP/1.1 505 HTTP Version Not Supported\r\n"), "\(answer)")
        #expect(answer.contains("gRPC over HTTP/2") && answer.contains("framed protocol"), "\(answer)")
        try server.checkServing()
    }

    @Test("a client speaking protocol version 2 gets GOAWAY naming the version and is closed")
    func wrongVersion() throws {
        let server = try TestServer()
        defer { server.stop() }
        let raw = try server.raw()
        try raw.send([0x4D, 0x52, 0x50, 0x43, 0x00, 0x02, 0x00, 0x00] + Frames.hello())
        let (_, status) = try goawayThenClose(raw)
        #expect(status.errorCode == "ERR_PROTOCOL")
        #expect(status.message.contains("version 2"))
        try server.checkServing()
    }

    struct Named: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        var testDescription: String { name }
    }

    @Test(
        "any frame before HELLO is a protocol error",
        arguments: [
            Named(name: "PING", bytes: Frames.ping()), Named(name: "CALL", bytes: Frames.echo(streamID: 1, [1])),
            Named(name: "CANCEL", bytes: Frames.cancel(streamID: 1)),
        ])
    func frameBeforeHello(frame: Named) throws {
        let server = try TestServer()
        defer { server.stop() }
        let raw = try server.raw()
        try raw.send(Preface.bytes + frame.bytes)
        let (_, status) = try goawayThenClose(raw)
        #expect(status.errorCode == "ERR_PROTOCOL")
        #expect(status.message.contains("HELLO"))
        try server.checkServing()
    }

    @Test("a wrong API key gets GOAWAY UNAUTHENTICATED / ERR_UNAUTHENTICATED, then the close")
    func badKey() throws {
        let server = try TestServer()
        defer { server.stop() }
        let raw = try server.raw()
        try raw.send(Frames.opening(apiKey: "not-a-key"))
        let (goaway, status) = try goawayThenClose(raw)
        #expect(status.code == StatusCode.unauthenticated.rawValue)
        #expect(status.errorCode == "ERR_UNAUTHENTICATED")
        #expect(goaway.lastStreamID == 0)

        // The client library reports the same refusal as its error.
        #expect {
            try server.connect { $0.apiKey = "not-a-key" }
        } throws: { error in
            (error as? RPCError)?.code == .unauthenticated && (error as? RPCError)?.errorCode == "ERR_UNAUTHENTICATED"
        }
        try server.checkServing()
    }

    @Test(
        "a frame longer than the maximum is refused from its 12-byte header, the payload never sent",
        arguments: [false, true])
    func oversizedHeaderOnly(afterHello: Bool) throws {
        let server = try TestServer()
        defer { server.stop() }
        let raw = try server.raw()
        if afterHello { try raw.handshake() } else { try raw.send(Preface.bytes) }
        try raw.send(Frames.raw(type: FrameType.call.rawValue, streamID: 1, length: 0xFFFF_FFF0))
        let (_, status) = try goawayThenClose(raw)
        #expect(status.code == StatusCode.resourceExhausted.rawValue)
        #expect(status.errorCode == "ERR_MESSAGE_TOO_LARGE")
        try server.checkServing()
    }

    @Test("a frame cut short by the client's close is dropped and the connection released")
    func truncatedFrame() throws {
        let server = try TestServer()
        defer { server.stop() }
        let raw = try server.raw()
        try raw.handshake()
        #expect(server.waitForConnections(1))
        let call = Frames.echo(streamID: 1, [UInt8](repeating: 3, count: 1_000))
        try raw.send(Array(call.prefix(500)))
        raw.shutdownWrite()
        #expect(try raw.expectClose().isEmpty, "nothing is answered for half a frame")
        #expect(server.waitForConnections(0))
        try server.checkServing()
    }

    @Test("an unknown frame type below 0x80 is a protocol error", arguments: [0x0B, 0x42, 0x7F] as [UInt8])
    func unknownFrameType(type: UInt8) throws {
        let server = try TestServer()
        defer { server.stop() }
        let (raw, _) = try server.rawOpen()
        try raw.send(Frames.raw(type: type, payload: [1, 2, 3, 4]))
        let (_, status) = try goawayThenClose(raw)
        #expect(status.errorCode == "ERR_PROTOCOL")
        #expect(status.message.contains("unknown frame type"))
        try server.checkServing()
    }

    @Test("reusing a live stream id, or going back to a lower one, is a protocol error naming the last stream")
    func streamIDRules() throws {
        let server = try TestServer()
        defer { server.stop() }
        let (reuser, _) = try server.rawOpen()
        try reuser.send(Frames.call(streamID: 1, TestService.park, EchoRequest(payload: [1])))
        #expect(server.service.waitForParked(1))
        try reuser.send(Frames.echo(streamID: 1, [2]))
        let (goaway, status) = try goawayThenClose(reuser)
        #expect(status.errorCode == "ERR_PROTOCOL")
        #expect(status.message.contains("already in use"))
        #expect(goaway.lastStreamID == 1)
        #expect(server.service.waitForTermination(of: 1) == .connectionClosed)

        let (lower, _) = try server.rawOpen()
        #expect(try lower.roundTrip(Frames.echo(streamID: 5, [5]), streamID: 5).replyError() == nil)
        try lower.send(Frames.echo(streamID: 3, [3]))
        let (lowerGoaway, lowerStatus) = try goawayThenClose(lower)
        #expect(lowerStatus.message.contains("not greater"))
        #expect(lowerGoaway.lastStreamID == 5)
        server.service.releaseParked()
        try server.checkServing()
    }
}
