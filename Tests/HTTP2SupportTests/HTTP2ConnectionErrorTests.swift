import HTTP2Support
import TestSupport
import Testing

/// What ends a connection: a preface that is not HTTP/2's, garbage after it, floods and rapid
/// resets. The raw bytes here are what no client library would produce.
@Suite("HTTP2ServerSession: connection errors and floods")
struct HTTP2ConnectionErrorTests {
    /// Feeds `bytes` to a fresh server session; returns its events and its output afterwards.
    static func feed(_ bytes: [UInt8], to server: HTTP2ServerSession = HTTP2ServerSession()) -> ([HTTP2Event], [UInt8])
    {
        let events = bytes.withUnsafeBytes { server.receive($0) }
        var output: [UInt8] = []
        server.takeOutput(into: &output)
        return (events, output)
    }

    @Test("an HTTP/1.1 request line is a bad preface, reported as such; nothing is sent")
    func http1Request() throws {
        let server = HTTP2ServerSession()
        let (events, output) = Self.feed(Array("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8), to: server)
        guard case .connectionError(let reason)? = events.last, events.count == 1 else {
            Issue.record("\(events)")
            return
        }
        #expect(reason.contains("HTTP/1") && reason.contains("GET / HTTP/1.1"), "\(reason)")
        #expect(output.isEmpty)
        #expect(server.wantsClose && !server.wantsRead && !server.wantsWrite)
        #expect(server.connectionError == reason)
        #expect(Self.feed(Array(RawFrames.preface), to: server).0.isEmpty, "nothing is processed after the error")
    }

    @Test("garbage after the preface is a connection error with a GOAWAY (PROTOCOL_ERROR) in the output")
    func garbageAfterPreface() {
        let server = HTTP2ServerSession()
        let (events, output) = Self.feed(RawFrames.preface + Array(repeating: 0xFF, count: 64), to: server)
        guard case .connectionError(let reason)? = events.last else {
            Issue.record("\(events)")
            return
        }
        #expect(reason.contains("SETTINGS"), "\(reason)")
        let goaways = RawFrames.parse(output).filter { $0.type == RawFrames.goaway }
        #expect(goaways.count == 1)
        #expect(goaways.first.map { Array($0.payload[4..<8]) } == [0, 0, 0, 1])
        #expect(server.wantsClose, "after its GOAWAY is out, the session is done")
    }

    @Test("a frame against the protocol mid-connection (DATA on stream 0): GOAWAY, then connectionError and wantsClose")
    func protocolErrorMidConnection() {
        var pair = HTTP2Pair()
        pair.pump()
        let events = RawFrames.frame(type: 0x0, payload: [1, 2, 3]).withUnsafeBytes { pair.server.receive($0) }
        #expect(events.isEmpty, "nghttp2 says so only with its GOAWAY")
        var output: [UInt8] = []
        let sent = pair.server.takeOutput(into: &output)
        #expect(RawFrames.parse(output).contains { $0.type == RawFrames.goaway })
        #expect(sent.count == 1 && { if case .connectionError = sent[0] { true } else { false } }())
        #expect(
            pair.server.connectionError?.contains("PROTOCOL_ERROR") == true, "\(pair.server.connectionError ?? "nil")")
        #expect(pair.server.wantsClose)
    }

    static let floods: [(String, [UInt8])] = [
        ("PING", RawFrames.frame(type: RawFrames.ping, payload: Array(repeating: 0, count: 8))),
        ("SETTINGS", RawFrames.frame(type: RawFrames.settings)),
    ]

    @Test(
        "100 000 frames that each want an ack, fed without reading the output, end in a connection error",
        arguments: 0..<2)
    func flood(_ index: Int) {
        let (name, frame) = Self.floods[index]
        let server = HTTP2ServerSession()
        var input = RawFrames.preface + RawFrames.frame(type: RawFrames.settings)
        input.reserveCapacity(input.count + 100_000 * frame.count)
        for _ in 0..<100_000 { input += frame }
        let (events, output) = Self.feed(input, to: server)
        guard case .connectionError(let reason)? = events.last else {
            Issue.record("\(name): \(events.suffix(3))")
            return
        }
        #expect(reason.lowercased().contains("flood"), "\(name): \(reason)")
        #expect(output.count < 64 * 1024, "\(name): \(output.count) bytes of output")
        // The connection's last frame is the GOAWAY nghttp2 does not send after a flood: the
        // server's preface first (nothing was sent yet), then GOAWAY ENHANCE_YOUR_CALM.
        #expect(Array(output.prefix(9)) == [0, 0, 0, 0x04, 0, 0, 0, 0, 0], "\(name): \(output.prefix(9))")
        let goaway = Array(output.dropFirst(9))
        #expect(goaway.count >= 17 && goaway[3] == 0x07, "\(name): \(goaway.prefix(17))")
        #expect(goaway.count >= 17 && Array(goaway[13..<17]) == [0, 0, 0, 0x0B], "\(name): error code")
        #expect(server.wantsClose)
        var more: [UInt8] = []
        server.takeOutput(into: &more)
        #expect(more.isEmpty, "the GOAWAY goes once")
    }

    @Test("the same acks read as they come are no flood")
    func acksRead() {
        let server = HTTP2ServerSession()
        _ = Self.feed(RawFrames.preface + RawFrames.frame(type: RawFrames.settings), to: server)
        let ping = RawFrames.frame(type: RawFrames.ping, payload: Array(repeating: 0, count: 8))
        for _ in 0..<100 {
            let (events, output) = Self.feed(Array([[UInt8]](repeating: ping, count: 500).joined()), to: server)
            #expect(events.isEmpty)
            #expect(RawFrames.parse(output).count == 500)
        }
        #expect(!server.wantsClose)
    }

    @Test("rapid reset: streams opened and reset past the RST_STREAM rate limit get nghttp2's GOAWAY")
    func rapidReset() {
        var pair = HTTP2Pair(
            configuration: HTTP2ServerConfiguration(streamResetBurst: 100, streamResetRate: 1),
            client: HTTP2TestClient(peerMaxConcurrentStreams: 1000))
        pair.pump()
        let ids = (0..<300).map { _ in pair.client.request() }
        pair.pump() // the requests must be out before their resets, or nghttp2 sends neither
        for id in ids { pair.client.reset(streamID: id) }
        pair.pump()
        let code = HTTP2ErrorCode.internalError.rawValue
        #expect(pair.takeClientEvents().contains { if case .goaway(_, code) = $0 { true } else { false } })
        let reason = pair.takeServerEvents().compactMap { if case .connectionError(let r) = $0 { r } else { nil } }
        #expect(reason.count == 1 && reason[0].contains("INTERNAL_ERROR"), "\(reason)")
    }
}
