internal import CNGHTTP2
public import HTTP2Support

/// An in-process nghttp2 client session, the peer of the server session under test: requests,
/// bodies, trailers, resets and GOAWAY made by nghttp2 itself, so no test writes frames by hand
/// where a real client library can produce them.
///
/// Used by HTTP2SupportTests against `HTTP2ServerSession` and by RPCGRPCTests (through
/// `GRPCSessionHarness`) against the gRPC session.
public final class HTTP2TestClient {
    /// What the client received, in order.
    public enum Event: Equatable, Sendable {
        case headers(streamID: Int32, headers: [HTTP2Header], endStream: Bool)
        case data(streamID: Int32, bytes: [UInt8], endStream: Bool)
        case reset(streamID: Int32, errorCode: UInt32)
        case closed(streamID: Int32, errorCode: UInt32)
        case goaway(lastStreamID: Int32, errorCode: UInt32)
    }

    /// The callbacks' state (the nghttp2 session's user data).
    final class State {
        var events: [Event] = []
        var block: [HTTP2Header] = []
        var data: [Int32: [UInt8]] = [:]
        /// Request bodies to send, with the trailers that end them (nil: END_STREAM on the data).
        /// `endStream` false leaves the stream open after the body (more is sent with `send`).
        var bodies: [Int32: (bytes: [UInt8], offset: Int, trailers: [HTTP2Header]?, endStream: Bool)] = [:]

        static func from(_ user: UnsafeMutableRawPointer?) -> State {
            Unmanaged<State>.fromOpaque(user!).takeUnretainedValue()
        }
    }

    let session: OpaquePointer
    let state = State()
    /// Output taken early (see `requestEndingOnEmptyData`), sent before the rest.
    private var pending: [UInt8] = []

    /// A client that has queued its preface and SETTINGS. `peerMaxConcurrentStreams` is what it
    /// assumes of the server before the server's SETTINGS arrive (nghttp2's default: 100). Without
    /// `autoWindowUpdate` the client never gives the server more window than `initialWindowSize`.
    public init(initialWindowSize: UInt32 = 65_535, peerMaxConcurrentStreams: Int = 100, autoWindowUpdate: Bool = true)
    {
        var callbacks: OpaquePointer?
        nghttp2_session_callbacks_new(&callbacks)
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, _, user in
            State.from(user).block = []
            return 0
        }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) {
            _, _, name, nameLength, value, valueLength, _, user in
            let name = String(decoding: UnsafeBufferPointer(start: name, count: nameLength), as: UTF8.self)
            State.from(user).block.append(
                HTTP2Header(name: name, value: Array(UnsafeBufferPointer(start: value, count: valueLength))))
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, streamID, data, length, user in
            State.from(user).data[streamID, default: []] += UnsafeBufferPointer(start: data, count: length)
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, user in
            let state = State.from(user)
            let frame = frame!.pointee
            let id = frame.hd.stream_id
            let endStream = frame.hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
            switch UInt32(frame.hd.type) {
            case NGHTTP2_HEADERS.rawValue:
                state.events.append(.headers(streamID: id, headers: state.block, endStream: endStream))
            case NGHTTP2_DATA.rawValue:
                state.events.append(
                    .data(streamID: id, bytes: state.data.removeValue(forKey: id) ?? [], endStream: endStream))
            case NGHTTP2_RST_STREAM.rawValue:
                state.events.append(.reset(streamID: id, errorCode: frame.rst_stream.error_code))
            case NGHTTP2_GOAWAY.rawValue:
                state.events.append(
                    .goaway(lastStreamID: frame.goaway.last_stream_id, errorCode: frame.goaway.error_code))
            default: break
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, id, code, user in
            State.from(user).events.append(.closed(streamID: id, errorCode: code))
            return 0
        }
        var option: OpaquePointer?
        nghttp2_option_new(&option)
        defer { nghttp2_option_del(option) }
        nghttp2_option_set_peer_max_concurrent_streams(option, UInt32(peerMaxConcurrentStreams))
        nghttp2_option_set_no_auto_window_update(option, autoWindowUpdate ? 0 : 1)
        var session: OpaquePointer?
        nghttp2_session_client_new2(&session, callbacks, Unmanaged.passUnretained(state).toOpaque(), option)
        self.session = session!
        let settings = [
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: initialWindowSize)
        ]
        nghttp2_submit_settings(self.session, 0, settings, settings.count)
    }

    deinit { nghttp2_session_del(session) }

    /// The request headers of a gRPC call to `path`.
    public static func requestHeaders(path: String = "/moderation.v1.Moderation/GetUser") -> [HTTP2Header] {
        [
            HTTP2Header(":method", "POST"), HTTP2Header(":scheme", "http"), HTTP2Header(":path", path),
            HTTP2Header(":authority", "localhost"), HTTP2Header("content-type", "application/grpc"),
            HTTP2Header("te", "trailers"),
        ]
    }

    /// Opens a stream: headers, then `body` (nil: none, END_STREAM on the headers), then
    /// `trailers` if any (else END_STREAM on the last DATA frame). Returns the stream id.
    /// With `endStream` false the stream stays open after `body` (no END_STREAM), for `send`.
    @discardableResult
    public func request(
        headers: [HTTP2Header] = HTTP2TestClient.requestHeaders(), body: [UInt8]? = nil,
        trailers: [HTTP2Header]? = nil, endStream: Bool = true
    ) -> Int32 {
        let nva = Self.nameValues(headers)
        defer { Self.free(nva) }
        guard let body else { return nghttp2_submit_request(session, nil, nva, nva.count, nil, nil) }
        var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: Self.readBody)
        let id = nghttp2_submit_request(session, nil, nva, nva.count, &provider, nil)
        state.bodies[id] = (body, 0, trailers, endStream)
        return id
    }

    /// More DATA on an open stream (one opened with `endStream: false` whose headers went out),
    /// ending it when `endStream`.
    public func send(streamID: Int32, bytes: [UInt8], endStream: Bool) {
        pending += output()
        state.bodies[streamID] = (bytes, 0, nil, endStream)
        var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: Self.readBody)
        let submitted = nghttp2_submit_data(
            session, endStream ? UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) : 0, streamID, &provider)
        precondition(submitted == 0, "nghttp2_submit_data: \(submitted)")
    }

    /// Opens a stream without ending it, then an empty DATA frame with END_STREAM.
    public func requestEndingOnEmptyData() -> Int32 {
        let nva = Self.nameValues(Self.requestHeaders())
        defer { Self.free(nva) }
        let id = nghttp2_submit_headers(session, 0, -1, nil, nva, nva.count, nil)
        state.bodies[id] = ([], 0, nil, true)
        pending += output() // nghttp2 opens the stream as its HEADERS go out; DATA needs it open
        var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: Self.readBody)
        let submitted = nghttp2_submit_data(session, UInt8(NGHTTP2_FLAG_END_STREAM.rawValue), id, &provider)
        precondition(submitted == 0, "nghttp2_submit_data: \(submitted)")
        return id
    }

    /// RST_STREAM; the default code is CANCEL (0x8), as a client library cancelling a call sends.
    public func reset(streamID: Int32, errorCode: UInt32 = 0x8) {
        nghttp2_submit_rst_stream(session, 0, streamID, errorCode)
    }

    public func goaway() {
        nghttp2_submit_goaway(session, 0, 0, NGHTTP2_NO_ERROR.rawValue, nil, 0)
    }

    /// Everything the client has to send now.
    public func output() -> [UInt8] {
        var bytes = pending
        pending = []
        while true {
            var data: UnsafePointer<UInt8>?
            let n = nghttp2_session_mem_send(session, &data)
            guard n > 0, let data else { return bytes }
            bytes += UnsafeBufferPointer(start: data, count: n)
        }
    }

    /// Feeds the server's bytes; returns what they completed.
    @discardableResult
    public func receive(_ bytes: [UInt8]) -> [Event] {
        let n = bytes.withUnsafeBufferPointer { nghttp2_session_mem_recv(session, $0.baseAddress, $0.count) }
        precondition(n == bytes.count, "the client rejected the server's bytes: \(n)")
        defer { state.events = [] }
        return state.events
    }

    private static let readBody: nghttp2_data_source_read_callback = { session, id, buffer, length, flags, _, user in
        let state = State.from(user)
        guard var body = state.bodies[id] else { return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue) }
        let n = min(length, body.bytes.count - body.offset)
        body.bytes.withUnsafeBytes {
            buffer!.update(from: $0.baseAddress!.assumingMemoryBound(to: UInt8.self) + body.offset, count: n)
        }
        body.offset += n
        state.bodies[id] = body
        if body.offset == body.bytes.count {
            flags!.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
            if !body.endStream {
                flags!.pointee |= NGHTTP2_DATA_FLAG_NO_END_STREAM.rawValue
            } else if let trailers = body.trailers {
                flags!.pointee |= NGHTTP2_DATA_FLAG_NO_END_STREAM.rawValue
                let nva = nameValues(trailers)
                defer { free(nva) }
                nghttp2_submit_trailer(session, id, nva, nva.count)
            }
        }
        return n
    }

    private static func nameValues(_ headers: [HTTP2Header]) -> [nghttp2_nv] {
        headers.map { header in
            let name = UnsafeMutablePointer<UInt8>.allocate(capacity: max(header.name.utf8.count, 1))
            name.initialize(from: Array(header.name.utf8), count: header.name.utf8.count)
            let value = UnsafeMutablePointer<UInt8>.allocate(capacity: max(header.value.count, 1))
            value.initialize(from: header.value, count: header.value.count)
            return nghttp2_nv(
                name: name, value: value, namelen: header.name.utf8.count, valuelen: header.value.count, flags: 0)
        }
    }

    private static func free(_ nva: [nghttp2_nv]) {
        for nv in nva {
            nv.name.deallocate()
            nv.value.deallocate()
        }
    }
}

/// A server session and a client joined by byte copies.
public struct HTTP2Pair {
    public let server: HTTP2ServerSession
    public let client: HTTP2TestClient
    /// Everything the server reported, in order.
    public var serverEvents: [HTTP2Event] = []
    /// Everything the client received, in order.
    public var clientEvents: [HTTP2TestClient.Event] = []

    public init(
        configuration: HTTP2ServerConfiguration = HTTP2ServerConfiguration(),
        client: HTTP2TestClient = HTTP2TestClient()
    ) {
        server = HTTP2ServerSession(configuration: configuration)
        self.client = client
    }

    /// Carries bytes both ways until neither side has anything to send.
    public mutating func pump() {
        while true {
            let request = client.output()
            if !request.isEmpty { serverEvents += request.withUnsafeBytes { server.receive($0) } }
            var response: [UInt8] = []
            serverEvents += server.takeOutput(into: &response)
            if !response.isEmpty { clientEvents += client.receive(response) }
            if request.isEmpty && response.isEmpty { return }
        }
    }

    /// Takes the server events gathered so far.
    public mutating func takeServerEvents() -> [HTTP2Event] {
        defer { serverEvents = [] }
        return serverEvents
    }

    /// Takes the client events gathered so far.
    public mutating func takeClientEvents() -> [HTTP2TestClient.Event] {
        defer { clientEvents = [] }
        return clientEvents
    }
}
