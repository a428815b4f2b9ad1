import HTTP2Support
import TestSupport
import Testing

/// HTTP2ServerSession against nghttp2's own client session, bytes carried by hand: requests in,
/// responses out, flow control, resets, GOAWAY; then the inputs a client library would not make
/// (an HTTP/1.1 request, garbage, floods) as raw bytes.
@Suite("HTTP2ServerSession: requests, responses and flow control over nghttp2")
struct HTTP2ServerSessionTests {
    static let body = Array("a request message".utf8)

    @Test("a request's headers, DATA and END_STREAM arrive as events in order, pseudo-headers and a -bin value intact")
    func requestEvents() throws {
        var pair = HTTP2Pair()
        let binary = HTTP2Header("trace-bin", "AAEC/w==")
        let id = pair.client.request(headers: HTTP2TestClient.requestHeaders() + [binary], body: Self.body)
        pair.pump()
        let events = pair.takeServerEvents()
        try #require(events.count == 2, "\(events)")
        guard case .request(let streamID, let headers, let endStream) = events[0] else {
            Issue.record("first event: \(events[0])")
            return
        }
        #expect(streamID == id && !endStream)
        #expect(
            headers.map(\.name) == [":method", ":scheme", ":path", ":authority", "content-type", "te", "trace-bin"])
        #expect(headers.first(named: ":path") == "/moderation.v1.Moderation/GetUser")
        #expect(headers.last == binary)
        #expect(events[1] == .data(streamID: id, bytes: Self.body, endStream: true))
    }

    /// How the client ends its side of a request.
    enum Ending: String, CaseIterable, Sendable {
        case onHeaders = "END_STREAM on the headers"
        case onEmptyData = "an empty DATA frame"
        case withTrailers = "the client's trailers"

        static let trailers = [HTTP2Header("x-checksum", "42")]

        func open(_ client: HTTP2TestClient) -> Int32 {
            switch self {
            case .onHeaders: client.request()
            case .onEmptyData: client.requestEndingOnEmptyData()
            case .withTrailers: client.request(body: body, trailers: Self.trailers)
            }
        }

        /// The events after the request's own.
        func expected(_ id: Int32) -> [HTTP2Event] {
            switch self {
            case .onHeaders: []
            case .onEmptyData: [.endStream(streamID: id)]
            case .withTrailers:
                [
                    .data(streamID: id, bytes: body, endStream: false),
                    .trailers(streamID: id, headers: HTTP2HeaderBlock(Self.trailers)),
                ]
            }
        }
    }

    @Test(
        "the end of a request: on the headers, an empty DATA frame, or the client's trailers",
        arguments: Ending.allCases)
    func requestEndings(_ ending: Ending) {
        var pair = HTTP2Pair()
        let id = ending.open(pair.client)
        pair.pump()
        let events = pair.takeServerEvents()
        guard case .request(let streamID, _, let endStream)? = events.first else {
            Issue.record("\(ending.rawValue): \(events)")
            return
        }
        #expect(streamID == id)
        #expect(endStream == (ending == .onHeaders))
        #expect(Array(events.dropFirst()) == ending.expected(id))
    }

    @Test("what nghttp2 holds is counted: it grows with open streams and falls back when they close")
    func allocatedBytes() throws {
        var pair = HTTP2Pair()
        pair.pump()
        let idle = pair.server.allocatedBytes
        #expect(idle > 0, "a session holds its HPACK tables and buffers")
        let ids = (0..<50).map { _ in pair.client.request(body: Self.body, endStream: false) }
        pair.pump()
        _ = pair.takeServerEvents()
        let open = pair.server.allocatedBytes
        #expect(open > idle + 50 * 100, "50 open streams: \(open) bytes, idle \(idle)")
        for id in ids {
            try pair.server.submitResponseHeaders(streamID: id, headers: [HTTP2Header(":status", "200")])
            try pair.server.submitTrailers(streamID: id, headers: [HTTP2Header("grpc-status", "0")])
        }
        pair.pump()
        for id in ids { pair.client.send(streamID: id, bytes: [], endStream: true) }
        pair.pump()
        #expect(pair.server.allocatedBytes < open, "closed: \(pair.server.allocatedBytes), open \(open)")
        #expect(pair.server.allocatedBytes <= idle + 4096, "closed: \(pair.server.allocatedBytes), idle \(idle)")
        print("nghttp2 holds \(idle) bytes idle, \(open) with 50 open streams, \(pair.server.allocatedBytes) after")
    }

    @Test("a response's headers, three DATA chunks and trailers reach the client intact; the stream then closes")
    func response() throws {
        var pair = HTTP2Pair()
        let id = pair.client.request(body: Self.body)
        pair.pump()
        _ = pair.takeServerEvents()
        let chunks = [Array("one ".utf8), Array(repeating: 7, count: 20_000), Array("three".utf8)]
        try pair.server.submitResponseHeaders(
            streamID: id, headers: [HTTP2Header(":status", "200"), HTTP2Header("content-type", "application/grpc")])
        for chunk in chunks { try pair.server.sendData(streamID: id, bytes: chunk) }
        try pair.server.submitTrailers(
            streamID: id, headers: [HTTP2Header("grpc-status", "0"), HTTP2Header("grpc-message", "")])
        pair.pump()
        let events = pair.takeClientEvents()
        #expect(
            events.first
                == .headers(
                    streamID: id,
                    headers: [HTTP2Header(":status", "200"), HTTP2Header("content-type", "application/grpc")],
                    endStream: false))
        var received: [UInt8] = []
        for case .data(_, let bytes, let endStream) in events {
            #expect(!endStream, "END_STREAM belongs on the trailers")
            received += bytes
        }
        #expect(received == chunks.flatMap { $0 })
        #expect(
            events.contains(
                .headers(
                    streamID: id, headers: [HTTP2Header("grpc-status", "0"), HTTP2Header("grpc-message", "")],
                    endStream: true)))
        #expect(events.last == .closed(streamID: id, errorCode: 0))
        #expect(pair.takeServerEvents() == [.streamClosed(streamID: id, errorCode: .noError)])
        #expect(pair.server.queuedBytes == 0)
    }

    @Test("empty trailers end the response with END_STREAM on its last DATA frame")
    func emptyTrailers() throws {
        var pair = HTTP2Pair()
        let id = pair.client.request()
        pair.pump()
        try pair.server.submitResponseHeaders(streamID: id, headers: [HTTP2Header(":status", "200")])
        try pair.server.sendData(streamID: id, bytes: Self.body)
        try pair.server.submitTrailers(streamID: id, headers: [])
        pair.pump()
        #expect(pair.takeClientEvents().contains(.data(streamID: id, bytes: Self.body, endStream: true)))
    }

    @Test("flow control: with a 100-byte window, 1 000 bytes go out 100 at a time, the rest queued until WINDOW_UPDATE")
    func flowControl() throws {
        var pair = HTTP2Pair(client: HTTP2TestClient(initialWindowSize: 100))
        let id = pair.client.request()
        pair.pump()
        let body = (0..<1000).map { UInt8($0 & 0xFF) }
        try pair.server.submitResponseHeaders(streamID: id, headers: [HTTP2Header(":status", "200")])
        try pair.server.sendData(streamID: id, bytes: body)
        try pair.server.submitTrailers(streamID: id, headers: [HTTP2Header("grpc-status", "0")])
        #expect(pair.server.queuedBytes(streamID: id) == 1000)

        var output: [UInt8] = []
        pair.server.takeOutput(into: &output)
        var first: [UInt8] = []
        for case .data(_, let bytes, _) in pair.client.receive(output) { first += bytes }
        #expect(first == Array(body.prefix(100)))
        #expect(pair.server.queuedBytes(streamID: id) == 900)
        #expect(pair.server.queuedBytes == 900)
        var more: [UInt8] = []
        pair.server.takeOutput(into: &more)
        #expect(more.isEmpty, "nothing more before the client's WINDOW_UPDATE")

        pair.pump()
        var rest: [UInt8] = []
        for case .data(_, let bytes, _) in pair.takeClientEvents() { rest += bytes }
        #expect(first + rest == body)
        #expect(pair.server.queuedBytes == 0)
        #expect(pair.takeServerEvents().last == .streamClosed(streamID: id, errorCode: .noError))
    }

    @Test("data submitted before the response headers waits for them")
    func dataBeforeHeaders() throws {
        var pair = HTTP2Pair()
        let id = pair.client.request()
        pair.pump()
        try pair.server.sendData(streamID: id, bytes: Self.body)
        pair.pump()
        #expect(pair.takeClientEvents().isEmpty)
        #expect(pair.server.queuedBytes(streamID: id) == Self.body.count)
        try pair.server.submitResponseHeaders(streamID: id, headers: [HTTP2Header(":status", "200")])
        try pair.server.submitTrailers(streamID: id, headers: [HTTP2Header("grpc-status", "0")])
        pair.pump()
        #expect(pair.takeClientEvents().contains(.data(streamID: id, bytes: Self.body, endStream: false)))
    }

    @Test("the client's RST_STREAM is reported, then the stream's close; its queued data is freed")
    func clientReset() throws {
        var pair = HTTP2Pair(client: HTTP2TestClient(initialWindowSize: 10, autoWindowUpdate: false))
        let id = pair.client.request()
        pair.pump()
        try pair.server.submitResponseHeaders(streamID: id, headers: [HTTP2Header(":status", "200")])
        try pair.server.sendData(streamID: id, bytes: Array(repeating: 1, count: 5000))
        pair.pump()
        _ = pair.takeServerEvents()
        #expect(pair.server.queuedBytes == 4990)
        pair.client.reset(streamID: id)
        pair.pump()
        #expect(
            pair.takeServerEvents() == [
                .streamReset(streamID: id, errorCode: .cancel), .streamClosed(streamID: id, errorCode: .cancel),
            ])
        #expect(pair.server.queuedBytes == 0)
        #expect(throws: HTTP2Error.self) { try pair.server.sendData(streamID: id, bytes: [1]) }
    }

    @Test("the server's reset drops the stream's queue and reaches the client")
    func serverReset() throws {
        var pair = HTTP2Pair(client: HTTP2TestClient(initialWindowSize: 10, autoWindowUpdate: false))
        let id = pair.client.request()
        pair.pump()
        try pair.server.submitResponseHeaders(streamID: id, headers: [HTTP2Header(":status", "200")])
        try pair.server.sendData(streamID: id, bytes: Array(repeating: 1, count: 5000))
        try pair.server.resetStream(streamID: id, errorCode: .enhanceYourCalm)
        #expect(pair.server.queuedBytes == 0)
        pair.pump()
        #expect(
            pair.takeClientEvents().contains(.reset(streamID: id, errorCode: HTTP2ErrorCode.enhanceYourCalm.rawValue)))
    }

    @Test("a trailers-only response is one HEADERS frame with END_STREAM")
    func trailersOnly() throws {
        var pair = HTTP2Pair()
        let id = pair.client.request()
        pair.pump()
        let headers = [HTTP2Header(":status", "200"), HTTP2Header("grpc-status", "12")]
        try pair.server.submitResponseHeaders(streamID: id, headers: HTTP2HeaderBlock(headers), endStream: true)
        #expect(throws: HTTP2Error.self) { try pair.server.sendData(streamID: id, bytes: [1]) }
        pair.pump()
        #expect(
            pair.takeClientEvents() == [
                .headers(streamID: id, headers: headers, endStream: true), .closed(streamID: id, errorCode: 0),
            ])
    }

    @Test("submissions on a stream that is not open are refused, not crashes")
    func unknownStream() {
        let server = HTTP2ServerSession()
        #expect(throws: HTTP2Error.self) { try server.sendData(streamID: 1, bytes: [1]) }
        #expect(throws: HTTP2Error.self) { try server.submitResponseHeaders(streamID: 3, headers: []) }
        #expect(throws: HTTP2Error.self) { try server.submitTrailers(streamID: 5, headers: []) }
    }

    @Test("the client's GOAWAY is reported and, with no stream open, the connection wants to close")
    func clientGoaway() {
        var pair = HTTP2Pair()
        pair.pump()
        #expect(!pair.server.wantsClose)
        pair.client.goaway()
        pair.pump()
        #expect(pair.takeServerEvents() == [.goaway(lastStreamID: 0, errorCode: .noError)])
        #expect(pair.server.wantsClose)
        #expect(pair.server.connectionError == nil)
    }

    @Test("the server's GOAWAY lets the open stream finish, refuses new ones, then the connection is over")
    func serverGoaway() throws {
        var pair = HTTP2Pair()
        let id = pair.client.request()
        pair.pump()
        try pair.server.submitGoaway(errorCode: .noError, debugData: Array("draining".utf8))
        pair.pump()
        #expect(pair.takeClientEvents() == [.goaway(lastStreamID: id, errorCode: 0)])
        #expect(!pair.server.wantsClose, "stream \(id) is still open")
        try pair.server.submitResponseHeaders(streamID: id, headers: [HTTP2Header(":status", "200")], endStream: true)
        pair.pump()
        #expect(pair.server.wantsClose)
        #expect(pair.server.connectionError == nil, "the server's own GOAWAY is no connection error")
    }

    @Test("a header block over the configured limit resets its stream and raises no request")
    func headerListLimit() {
        var pair = HTTP2Pair(configuration: HTTP2ServerConfiguration(maxHeaderListSize: 1024))
        let id = pair.client.request(
            headers: HTTP2TestClient.requestHeaders() + [HTTP2Header("big", String(repeating: "x", count: 2000))])
        let small = pair.client.request()
        pair.pump()
        let events = pair.takeServerEvents()
        #expect(!events.contains { if case .request(id, _, _) = $0 { true } else { false } })
        #expect(events.contains { if case .request(small, _, _) = $0 { true } else { false } })
        #expect(
            pair.takeClientEvents().contains(.reset(streamID: id, errorCode: HTTP2ErrorCode.internalError.rawValue)))
        #expect(!pair.server.wantsClose)
    }

    @Test("1 000 streams against a limit of 100: 900 are refused with REFUSED_STREAM, the connection lives on")
    func concurrentStreamLimit() {
        var pair = HTTP2Pair(
            configuration: HTTP2ServerConfiguration(maxConcurrentStreams: 100),
            client: HTTP2TestClient(peerMaxConcurrentStreams: 10_000))
        for _ in 0..<1000 { pair.client.request() }
        pair.pump()
        let requests = pair.takeServerEvents().filter { if case .request = $0 { true } else { false } }
        #expect(requests.count == 100)
        let refused = pair.takeClientEvents().filter {
            if case .reset(_, HTTP2ErrorCode.refusedStream.rawValue) = $0 { true } else { false }
        }
        #expect(refused.count == 900)
        #expect(!pair.server.wantsClose)
        #expect(pair.server.connectionError == nil)
    }
}
