import HTTP2Support
import Testing

/// HTTP2ClientSession against HTTP2ServerSession in process, bytes carried by hand: a request
/// and its body, the response's headers, DATA and trailers, a trailers-only response, a body
/// larger than the windows, resets both ways, GOAWAY, and a peer that is not an HTTP/2 server.
@Suite("HTTP2ClientSession: requests and responses against HTTP2ServerSession")
struct HTTP2ClientSessionTests {
    static let request: HTTP2HeaderBlock = [
        HTTP2Header(":method", "POST"), HTTP2Header(":scheme", "http"),
        HTTP2Header(":path", "/moderation.v1.Moderation/GetUser"), HTTP2Header(":authority", "localhost"),
        HTTP2Header("content-type", "application/grpc"), HTTP2Header("te", "trailers"),
    ]

    /// A client and a server joined by byte copies.
    final class Pair {
        let client = HTTP2ClientSession()
        let server: HTTP2ServerSession
        var clientEvents: [HTTP2Event] = []
        var serverEvents: [HTTP2Event] = []

        init(server: HTTP2ServerSession = HTTP2ServerSession()) { self.server = server }

        /// Carries bytes both ways until neither side has anything to send.
        func pump() {
            while true {
                var toServer: [UInt8] = []
                clientEvents += client.takeOutput(into: &toServer)
                if !toServer.isEmpty { serverEvents += toServer.withUnsafeBytes { server.receive($0) } }
                var toClient: [UInt8] = []
                serverEvents += server.takeOutput(into: &toClient)
                if !toClient.isEmpty { clientEvents += client.receive(toClient) }
                if toServer.isEmpty && toClient.isEmpty { return }
            }
        }

        func takeClientEvents() -> [HTTP2Event] {
            defer { clientEvents = [] }
            return clientEvents.filter { if case .streamClosed = $0 { false } else { true } }
        }

        func takeServerEvents() -> [HTTP2Event] {
            defer { serverEvents = [] }
            return serverEvents.filter { if case .streamClosed = $0 { false } else { true } }
        }
    }

    @Test("a request with a body arrives at the server; headers, DATA and trailers come back as events in order")
    func exchange() throws {
        let pair = Pair()
        let id = try pair.client.submitRequest(headers: Self.request)
        try pair.client.sendData(streamID: id, bytes: Array("hello".utf8))
        try pair.client.endRequest(streamID: id)
        pair.pump()
        let received = pair.takeServerEvents()
        #expect(
            received == [
                .request(streamID: id, headers: Self.request, endStream: false),
                .data(streamID: id, bytes: Array("hello".utf8), endStream: true),
            ], "\(received)")

        let headers: HTTP2HeaderBlock = [
            HTTP2Header(":status", "200"), HTTP2Header("content-type", "application/grpc"),
        ]
        try pair.server.submitResponseHeaders(streamID: id, headers: headers)
        try pair.server.sendData(streamID: id, bytes: [1, 2, 3])
        let trailers: HTTP2HeaderBlock = [HTTP2Header("grpc-status", "0")]
        try pair.server.submitTrailers(streamID: id, headers: trailers)
        pair.pump()
        #expect(
            pair.takeClientEvents() == [
                .response(streamID: id, headers: headers, endStream: false),
                .data(streamID: id, bytes: [1, 2, 3], endStream: false), .trailers(streamID: id, headers: trailers),
            ])
        #expect(
            pair.client.firstBytesReceived.count >= 9 && pair.client.firstBytesReceived[3] == 0x04,
            "the server's first frame is SETTINGS")
    }

    @Test("a trailers-only response is one .response with endStream; a request may end on its headers")
    func trailersOnly() throws {
        let pair = Pair()
        let id = try pair.client.submitRequest(headers: Self.request, endStream: true)
        pair.pump()
        #expect(pair.takeServerEvents() == [.request(streamID: id, headers: Self.request, endStream: true)])
        let headers: HTTP2HeaderBlock = [HTTP2Header(":status", "200"), HTTP2Header("grpc-status", "5")]
        try pair.server.submitResponseHeaders(streamID: id, headers: headers, endStream: true)
        pair.pump()
        #expect(pair.takeClientEvents() == [.response(streamID: id, headers: headers, endStream: true)])
    }

    @Test("a body far over the server's window goes out whole as the server's WINDOW_UPDATEs arrive")
    func flowControl() throws {
        let pair = Pair()
        let body = (0..<300_000).map { UInt8(truncatingIfNeeded: $0) }
        let id = try pair.client.submitRequest(headers: Self.request)
        try pair.client.sendData(streamID: id, bytes: body)
        try pair.client.endRequest(streamID: id)
        pair.pump()
        var received: [UInt8] = []
        var ended = false
        for event in pair.takeServerEvents() {
            if case .data(_, let bytes, let endStream) = event {
                received += bytes
                ended = ended || endStream
            }
        }
        #expect(received == body)
        #expect(ended)
        #expect(pair.client.queuedBytes == 0)
    }

    @Test("streams run side by side; a client reset reaches the server, a server reset reaches the client")
    func resets() throws {
        let pair = Pair()
        let first = try pair.client.submitRequest(headers: Self.request)
        let second = try pair.client.submitRequest(headers: Self.request)
        #expect(second > first)
        pair.pump()
        _ = pair.takeServerEvents()
        try pair.client.resetStream(streamID: first, errorCode: .cancel)
        pair.pump()
        #expect(pair.takeServerEvents() == [.streamReset(streamID: first, errorCode: .cancel)])
        #expect(throws: HTTP2Error.self) { try pair.client.sendData(streamID: first, bytes: [1]) }

        try pair.server.resetStream(streamID: second, errorCode: .refusedStream)
        pair.pump()
        #expect(pair.takeClientEvents() == [.streamReset(streamID: second, errorCode: .refusedStream)])
    }

    @Test("the server's GOAWAY arrives as an event naming the last stream it processed")
    func goaway() throws {
        let pair = Pair()
        let id = try pair.client.submitRequest(headers: Self.request, endStream: true)
        pair.pump()
        try pair.server.submitGoaway()
        pair.pump()
        #expect(pair.takeClientEvents() == [.goaway(lastStreamID: id, errorCode: .noError)])
    }

    @Test("a peer that answers the preface with anything but SETTINGS is a connection error; its bytes are kept")
    func notHTTP2() throws {
        let client = HTTP2ClientSession()
        var preface: [UInt8] = []
        client.takeOutput(into: &preface)
        #expect(preface.starts(with: Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)))
        let reply = Array("HTTP/1.1 400 Bad Request\r\n\r\n".utf8)
        let events = client.receive(reply)
        #expect(events.contains { if case .connectionError = $0 { true } else { false } }, "\(events)")
        #expect(client.firstBytesReceived == reply)
        #expect(client.connectionError != nil)
        #expect(throws: HTTP2Error.self) { _ = try client.submitRequest(headers: Self.request) }
    }
}
