internal import CNGHTTP2

/// One HTTP/2 connection's client side over nghttp2, driven by bytes like `HTTP2ServerSession`:
/// the caller submits requests, writes what `takeOutput` gives, feeds what it read (`receive`)
/// and acts on the events (`.response`, `.data`, `.trailers`, `.streamReset`, `.streamClosed`,
/// `.goaway`, `.connectionError`).
///
/// It exists so that tools (rpc-probe's `--grpc`) can speak gRPC to any server without a socket
/// library of their own in the way: the connection preface, SETTINGS, PING, HPACK, stream states
/// and flow control are nghttp2's, the socket is the caller's, and tests join it to a
/// `HTTP2ServerSession` with byte copies.
///
/// Request bodies wait in a per-stream queue that a data provider drains as the server's windows
/// allow, so `sendData` never blocks; a request stays open for more data (a client stream) until
/// `endRequest`. Confined to one thread; not `Sendable`.
public final class HTTP2ClientSession {
    private let session: OpaquePointer
    /// The callbacks' state; outlives `session` (deleted in `deinit` while this is still held).
    private let state: SessionState

    /// A client session that has queued the connection preface and its SETTINGS (sent by the
    /// first `takeOutput`).
    /// - Parameters:
    ///   - initialWindowSize: SETTINGS_INITIAL_WINDOW_SIZE, how much each response stream may
    ///     send before our WINDOW_UPDATE (nghttp2 sends those as data is received).
    ///   - connectionWindowSize: the connection's receive window, for all streams together.
    ///   - maxHeaderListSize: the largest response header block accepted (a stream whose block is
    ///     larger is reset); also announced in SETTINGS.
    public init(
        initialWindowSize: UInt32 = 1 << 20, connectionWindowSize: Int32 = 1 << 24, maxHeaderListSize: UInt32 = 65_536
    ) {
        state = SessionState(maxHeaderListSize: Int(maxHeaderListSize))

        session = NGHTTP2Calls.makeSession(state: state) { session, callbacks, user, option in
            nghttp2_session_client_new2(session, callbacks, user, option)
        }
        NGHTTP2Calls.submitSettings(
            session,
            [
                // Servers must not push to a gRPC client.
                (NGHTTP2_SETTINGS_ENABLE_PUSH, 0),
                (NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, initialWindowSize),
                (NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, maxHeaderListSize),
            ], what: "the client's SETTINGS")
        let widened = nghttp2_session_set_local_window_size(
            session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, connectionWindowSize)
        precondition(widened == 0, "nghttp2 refused the connection window: \(NGHTTP2Calls.text(widened))")
    }

    deinit { nghttp2_session_del(session) }

    // MARK: Input

    /// Feeds bytes read from the server; returns what they completed, in order.
    ///
    /// After a `.connectionError` (a server that does not speak HTTP/2, a protocol error) nothing
    /// more is processed.
    public func receive(_ bytes: UnsafeRawBufferPointer) -> [HTTP2Event] {
        guard state.connectionError == nil, let base = bytes.baseAddress, bytes.count > 0 else { return [] }
        if state.firstBytes.count < 64 { state.firstBytes += bytes.prefix(64 - state.firstBytes.count) }
        let result = nghttp2_session_mem_recv(session, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        if result < 0 { state.fail("HTTP/2 connection error: \(NGHTTP2Calls.text(Int32(result)))", fatal: true) }
        var events = state.events
        state.events = []
        if let reason = state.connectionError { events.append(.connectionError(reason)) }
        return events
    }

    /// `receive` over an array.
    public func receive(_ bytes: [UInt8]) -> [HTTP2Event] {
        bytes.withUnsafeBytes { receive($0) }
    }

    /// The first bytes the server sent (up to 64), to say what a peer that is not an HTTP/2
    /// server answered instead.
    public var firstBytesReceived: [UInt8] { state.firstBytes }

    // MARK: Output

    /// Appends everything nghttp2 has to send now (the preface, SETTINGS, requests, DATA as far
    /// as the windows allow, acknowledgements); returns what sending did (`.streamClosed` after a
    /// reset went out, say).
    @discardableResult
    public func takeOutput(into buffer: inout [UInt8]) -> [HTTP2Event] {
        guard !state.isFatal else { return [] }
        return NGHTTP2Calls.takeOutput(of: session, state, into: &buffer)
    }

    /// True while nghttp2 expects more input.
    public var wantsRead: Bool { !state.isFatal && nghttp2_session_want_read(session) != 0 }

    /// True when `takeOutput` has something to give.
    public var wantsWrite: Bool { !state.isFatal && nghttp2_session_want_write(session) != 0 }

    /// True when the connection is over (a GOAWAY exchange with no stream left, an error): close it.
    public var wantsClose: Bool {
        state.isFatal || (nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0)
    }

    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS: how many requests it lets run at once on
    /// this connection (nghttp2 holds back the HEADERS of any more until one ends). Unlimited
    /// (2^31 - 1) until the server's SETTINGS frame has been received.
    public var peerMaxConcurrentStreams: UInt32 {
        nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS)
    }

    /// Why the connection failed, once it has.
    public var connectionError: String? { state.connectionError }

    // MARK: Requests

    /// Opens a stream with the request's header block (pseudo-headers first: `:method`,
    /// `:scheme`, `:path`, `:authority`); returns its id. With `endStream` the request has no
    /// body; otherwise the body follows through `sendData` and ends with `endRequest`.
    public func submitRequest(headers: HTTP2HeaderBlock, endStream: Bool = false) throws(HTTP2Error) -> Int32 {
        guard !state.isFatal, state.connectionError == nil else {
            throw HTTP2Error(code: 0, message: "the connection failed: \(state.connectionError ?? "")")
        }
        let stream = OutboundStream()
        stream.headersSubmitted = true
        stream.isEnded = endStream
        let id: Int32
        if endStream {
            id = headers.withNameValues { nghttp2_submit_request(session, nil, $0, $1, nil, nil) }
        } else {
            var provider = NGHTTP2Calls.dataProvider(for: stream)
            id = headers.withNameValues { nghttp2_submit_request(session, nil, $0, $1, &provider, nil) }
        }
        try NGHTTP2Calls.check(id, "submitting a request")
        if !endStream { state.streams[id] = stream }
        return id
    }

    /// Queues body bytes for the request; they go out in DATA frames as flow control allows.
    public func sendData(streamID: Int32, bytes: [UInt8]) throws(HTTP2Error) {
        try NGHTTP2Calls.queue(bytes, on: try openStream(streamID), streamID: streamID, of: session, state)
    }

    /// Ends the request body: END_STREAM on the last DATA frame, after all queued data.
    public func endRequest(streamID: Int32) throws(HTTP2Error) {
        let stream = try openStream(streamID)
        guard !stream.isEnded else { throw HTTP2Error(code: 0, message: "stream \(streamID): already ended") }
        stream.trailers = []
        stream.isEnded = true
        try NGHTTP2Calls.resume(streamID, stream, of: session)
    }

    /// Resets the stream (RST_STREAM): gRPC's cancellation (`CANCEL`). Its queued data is dropped.
    public func resetStream(streamID: Int32, errorCode: HTTP2ErrorCode = .cancel) throws(HTTP2Error) {
        let result = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, errorCode.rawValue)
        try NGHTTP2Calls.check(result, "stream \(streamID): submitting RST_STREAM")
        if let stream = state.streams.removeValue(forKey: streamID) { state.queuedBytes -= stream.queue.count }
    }

    /// Sends GOAWAY: the client is done with the connection.
    public func submitGoaway(errorCode: HTTP2ErrorCode = .noError) throws(HTTP2Error) {
        let result = nghttp2_submit_goaway(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, errorCode.rawValue, nil, 0)
        try NGHTTP2Calls.check(result, "submitting GOAWAY")
        state.goawaysSubmitted += 1
    }

    /// Request body bytes submitted and not yet sent (the server's windows hold them).
    public var queuedBytes: Int { state.queuedBytes }

    // MARK: Helpers

    /// The request's output side while the stream is open. (nghttp2 creates a client stream only
    /// when its HEADERS go out, so the session's own record is the one to ask: it is removed
    /// when the stream closes.)
    private func openStream(_ streamID: Int32) throws(HTTP2Error) -> OutboundStream {
        guard !state.isFatal, let stream = state.streams[streamID] else {
            throw HTTP2Error(code: Int32(NGHTTP2_ERR_STREAM_CLOSED.rawValue), message: "stream \(streamID) is not open")
        }
        return stream
    }
}
