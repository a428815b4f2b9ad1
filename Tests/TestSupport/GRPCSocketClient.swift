public import HTTP2Support

/// A gRPC client over a real socket for loop tests: nghttp2's own client session
/// (`HTTP2TestClient`) speaking through a `RawConnection`, with the frame types the server sent
/// noted as they arrive (PING, GOAWAY — which the session answers or absorbs itself). A test
/// chooses when bytes move: `exchange` reads what arrived and, unless told not to, sends the
/// session's answers (a client that stops answering is a quiet peer).
public final class GRPCSocketClient {
    public let raw: RawConnection
    public let session = HTTP2TestClient()
    /// The type of every frame the server sent, in order (HTTP/2 frame type codes: 6 PING, 7 GOAWAY).
    public private(set) var frameTypes: [UInt8] = []
    /// Everything the session reported, in order.
    public private(set) var events: [HTTP2TestClient.Event] = []
    /// Bytes of the server's frame in progress still to skip, and a partial frame header.
    private var skip = 0
    private var header: [UInt8] = []

    public static let ping: UInt8 = 6
    public static let goaway: UInt8 = 7

    /// Connects to 127.0.0.1:`port`; `preface` false sends nothing yet.
    public init(port: UInt16, preface: Bool = true) throws {
        raw = try RawConnection(port: port)
        if preface { try send() }
    }

    /// Sends what the session has to send.
    public func send() throws {
        let bytes = session.output()
        if !bytes.isEmpty { try raw.send(bytes) }
    }

    /// Opens a call to `path` with `message` (already in gRPC's framing), `extra` headers after
    /// the standard ones and the key's; `end` false leaves the request open. Returns the stream.
    @discardableResult
    public func call(
        _ path: String, message: [UInt8]?, apiKey: String?, extra: [HTTP2Header] = [], end: Bool = true
    ) throws -> Int32 {
        var headers = HTTP2TestClient.requestHeaders(path: path)
        if let apiKey { headers.append(HTTP2Header("authorization", "Bearer \(apiKey)")) }
        let id = session.request(headers: headers + extra, body: message, endStream: end)
        try send()
        return id
    }

    /// Reads what arrives within `waitMs` and, when `answer`, sends the session's answers (PING
    /// and SETTINGS acknowledgements, WINDOW_UPDATEs). Returns the new frame types.
    @discardableResult
    public func exchange(waitMs: Int = 20, answer: Bool = true) throws -> [UInt8] {
        let bytes = try raw.availableBytes(waitMs: waitMs)
        let before = frameTypes.count
        note(bytes)
        if !bytes.isEmpty { events += session.receive(bytes) }
        if answer { try send() }
        return Array(frameTypes[before...])
    }

    /// Exchanges until `condition` holds or `timeoutMs` passes.
    public func exchange(untilMs timeoutMs: Int, answer: Bool = true, _ condition: () -> Bool) throws -> Bool {
        let deadline = Clock.nowMs + timeoutMs
        while !condition() {
            guard Clock.nowMs < deadline, !raw.peerClosed else { return condition() }
            try exchange(waitMs: 10, answer: answer)
        }
        return true
    }

    /// True when the server sent nothing within `waitMs` and the connection is still open.
    public func isQuiet(waitMs: Int = 20) throws -> Bool {
        try exchange(waitMs: waitMs, answer: false).isEmpty && !raw.peerClosed
    }

    /// Reads until the server closes; true when it did within `timeoutMs`.
    public func closes(timeoutMs: Int = 2_000) throws -> Bool {
        try exchange(untilMs: timeoutMs, answer: false) { raw.peerClosed }
    }

    /// The trailers (or trailers-only headers) that ended `stream`, if they came.
    public func ending(of stream: Int32) -> [HTTP2Header]? {
        for case .headers(let id, let headers, true) in events where id == stream { return headers }
        return nil
    }

    /// Follows the server's frame headers through `bytes` to note each frame's type.
    private func note(_ bytes: [UInt8]) {
        var index = 0
        while index < bytes.count {
            if skip > 0 {
                let n = min(skip, bytes.count - index)
                skip -= n
                index += n
                continue
            }
            header.append(bytes[index])
            index += 1
            if header.count == 9 {
                frameTypes.append(header[3])
                skip = Int(header[0]) << 16 | Int(header[1]) << 8 | Int(header[2])
                header = []
            }
        }
    }
}
