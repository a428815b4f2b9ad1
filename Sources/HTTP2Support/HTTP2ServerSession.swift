internal import CNGHTTP2

/// One HTTP/2 connection's server side over nghttp2, driven by bytes: the caller feeds what it
/// read (`receive`), acts on the events, submits responses, and writes what `takeOutput` gives.
///
/// It knows nothing of sockets, threads or gRPC, so the listener's event loop can own it like a
/// `TLSSession`, and tests can drive it with bytes alone. nghttp2 does the protocol: the preface,
/// SETTINGS and their acknowledgements, PING, HPACK, stream states, flow control (it sends the
/// WINDOW_UPDATEs for received data itself) and the flood limits of the configuration.
///
/// Response bodies wait in a per-stream queue that a data provider drains as the peer's windows
/// allow, so `sendData` never blocks and never overruns flow control; `queuedBytes` tells the
/// caller how much is waiting (a slow consumer). A stream's queue is freed when it closes.
///
/// Confined to one thread (the connection's loop); not `Sendable`.
public final class HTTP2ServerSession {
    private let session: OpaquePointer
    /// The callbacks' state; outlives `session` (deleted in `deinit` while this is still held).
    private let state: SessionState
    /// What the session announced and holds the peer to.
    public let configuration: HTTP2ServerConfiguration

    /// Told of each request as nghttp2 reads it (see `HTTP2ServerSessionDelegate`); nil: `receive`
    /// reports events instead. Not retained: the delegate owns the session.
    public unowned(unsafe) var delegate: (any HTTP2ServerSessionDelegate)? {
        get { state.delegate }
        set { state.delegate = newValue }
    }

    /// A server session that has queued its SETTINGS (sent by the first `takeOutput`).
    public init(configuration: HTTP2ServerConfiguration = HTTP2ServerConfiguration()) {
        self.configuration = configuration
        state = SessionState(maxHeaderListSize: Int(configuration.maxHeaderListSize))

        var mem = CountingAllocator.mem(counting: state.allocatedBytes)
        session = NGHTTP2Calls.makeSession(state: state) { option in
            nghttp2_option_set_max_outbound_ack(option, configuration.maxOutboundAcks)
            nghttp2_option_set_max_settings(option, configuration.maxSettingsEntries)
            nghttp2_option_set_max_continuations(option, configuration.maxContinuations)
            nghttp2_option_set_stream_reset_rate_limit(
                option, configuration.streamResetBurst, configuration.streamResetRate)
        } create: { session, callbacks, user, option in
            nghttp2_session_server_new3(session, callbacks, user, option, &mem)
        }
        NGHTTP2Calls.submitSettings(
            session,
            [
                (NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, configuration.maxConcurrentStreams),
                (NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, configuration.initialWindowSize),
                (NGHTTP2_SETTINGS_MAX_FRAME_SIZE, configuration.maxFrameSize),
                (NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, configuration.maxHeaderListSize),
            ], what: "the configuration's SETTINGS")
    }

    deinit { nghttp2_session_del(session) }

    /// Bytes nghttp2 holds for this connection now: its HPACK tables, its streams, the frames it
    /// has queued — what the peer can make it keep, for the server's memory budget.
    public var allocatedBytes: Int { state.allocatedBytes.pointee }

    // MARK: Input

    /// Feeds bytes read from the peer; returns what they completed, in order.
    ///
    /// A partial frame is kept by nghttp2 until the rest arrives. After a `.connectionError`
    /// nothing more is processed (later calls return no events).
    public func receive(_ bytes: UnsafeRawBufferPointer) -> [HTTP2Event] {
        var events: [HTTP2Event] = []
        receive(bytes, into: &events)
        return events
    }

    /// `receive`, with the events put in `events` (emptied first): a caller that feeds the
    /// session frame by frame keeps one array for them, and the session another, which trade
    /// places at each call, so no call allocates one.
    public func receive(_ bytes: UnsafeRawBufferPointer, into events: inout [HTTP2Event]) {
        events.removeAll(keepingCapacity: true)
        guard state.connectionError == nil, let base = bytes.baseAddress, bytes.count > 0 else { return }
        // The callbacks append to `state.events`: the caller's (empty) array, for this call.
        swap(&events, &state.events)
        defer { swap(&events, &state.events) }
        if state.firstBytes.count < 64 { state.firstBytes += bytes.prefix(64 - state.firstBytes.count) }
        let result = nghttp2_session_mem_recv(session, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        if result < 0 {
            state.fail(failureReason(Int32(result)), fatal: true)
            if Int32(result) == NGHTTP2_ERR_BAD_CLIENT_MAGIC.rawValue {
                refusedPreface = true
            } else {
                prepareFinalGoaway(Int32(result))
            }
        }
        if let reason = state.connectionError { state.events.append(.connectionError(reason)) }
    }

    /// The reason for a fatal error of `nghttp2_session_mem_recv`; for a bad preface, what the
    /// client sent instead (an HTTP/1.1 request line, most often).
    private func failureReason(_ code: Int32) -> String {
        guard code == NGHTTP2_ERR_BAD_CLIENT_MAGIC.rawValue else {
            return "HTTP/2 connection error: \(NGHTTP2Calls.text(code))"
        }
        let line = state.firstBytes.prefix { $0 != 13 && $0 != 10 }
        let shown = String(decoding: line.map { (32..<127).contains($0) ? $0 : 63 }, as: UTF8.self)
        let http1 = line.count >= 8 && shown.contains(" HTTP/1.")
        return
            (http1
            ? "an HTTP/1 request where HTTP/2's connection preface was expected: "
            : "not HTTP/2's connection preface: ") + "\"\(shown)\""
    }

    /// After a fatal error of a peer that did speak HTTP/2 (a flood, mostly), the GOAWAY nghttp2
    /// will not send: ENHANCE_YOUR_CALM for a flood, PROTOCOL_ERROR otherwise, naming the last
    /// stream processed — preceded by the server's preface (an empty SETTINGS) when nothing was
    /// sent yet, as every frame must be. Built by hand: the nghttp2 session may only be deleted.
    private func prepareFinalGoaway(_ code: Int32) {
        var bytes: [UInt8] = []
        if !state.sentOutput { bytes += [0, 0, 0, 0x04, 0, 0, 0, 0, 0] }
        let error = code == NGHTTP2_ERR_FLOODED.rawValue ? HTTP2ErrorCode.enhanceYourCalm : .protocolError
        let debug = Array((state.connectionError ?? "").utf8.prefix(200))
        let length = 8 + debug.count
        bytes += [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), 0x07, 0, 0, 0, 0, 0]
        let last = UInt32(max(0, nghttp2_session_get_last_proc_stream_id(session)))
        for value in [last & 0x7FFF_FFFF, error.rawValue] {
            bytes += [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
        }
        state.finalBytes = bytes + debug
    }

    // MARK: Output

    /// Appends everything nghttp2 has to send now (frames queued by `receive` and the submit
    /// functions, DATA as far as the windows allow); call it once per loop turn, then write.
    ///
    /// Returns what sending did: `.streamClosed` for streams whose last frame went out (the
    /// response's END_STREAM after the request's, or a reset), and `.connectionError` when nghttp2
    /// sent a GOAWAY of its own over an error it found in the input (a frame against the protocol
    /// mid-connection, the peer's resets past the rate limit), which `receive` could not yet tell.
    /// After a fatal error only the connection's last GOAWAY is appended (when the peer spoke
    /// HTTP/2 at all): the connection is to be closed after it.
    @discardableResult
    public func takeOutput(into buffer: inout [UInt8]) -> [HTTP2Event] {
        guard !state.isFatal else {
            buffer += state.finalBytes
            state.finalBytes = []
            return []
        }
        return NGHTTP2Calls.takeOutput(of: session, state, into: &buffer)
    }

    /// True while nghttp2 expects more input (false after a GOAWAY exchange with no streams left,
    /// or after the connection failed).
    public var wantsRead: Bool { !state.isFatal && nghttp2_session_want_read(session) != 0 }

    /// True when `takeOutput` has something to give.
    public var wantsWrite: Bool {
        state.isFatal ? !state.finalBytes.isEmpty : nghttp2_session_want_write(session) != 0
    }

    /// True when the connection is over: nothing to read or write (a GOAWAY exchange finished, or
    /// nghttp2's own GOAWAY after an error was sent), or a fatal error. Close it.
    public var wantsClose: Bool {
        (state.isFatal && state.finalBytes.isEmpty)
            || (!state.isFatal && nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0)
    }

    /// True when the connection failed because the client's first bytes were not HTTP/2's
    /// connection preface (`.connectionError` says what they were instead).
    public private(set) var refusedPreface = false

    /// Why the connection failed, as the `.connectionError` event (of `receive` or `takeOutput`)
    /// said: for the close's log line.
    public var connectionError: String? { state.connectionError }

    // MARK: Responses

    /// Sends the response's header block (`:status` first); `endStream` makes it a trailers-only
    /// response (gRPC's immediate error), otherwise the body follows through `sendData` and the
    /// response ends with `submitTrailers`.
    ///
    /// Data already queued with `sendData` goes out after these headers.
    public func submitResponseHeaders(
        streamID: Int32, headers: HTTP2HeaderBlock, endStream: Bool = false
    ) throws(HTTP2Error) {
        let stream = try streamBeforeHeaders(streamID)
        if endStream {
            guard stream.queue.isEmpty else {
                throw HTTP2Error(code: 0, message: "stream \(streamID): a trailers-only response with data queued")
            }
            let flags = UInt8(NGHTTP2_FLAG_END_STREAM.rawValue)
            let result = headers.withNameValues { nghttp2_submit_headers(session, flags, streamID, nil, $0, $1, nil) }
            try NGHTTP2Calls.check(result, "stream \(streamID): submitting a trailers-only response")
            stream.isEnded = true
        } else {
            var provider = NGHTTP2Calls.dataProvider(for: stream)
            let result = headers.withNameValues { nghttp2_submit_response(session, streamID, $0, $1, &provider) }
            try NGHTTP2Calls.check(result, "stream \(streamID): submitting response headers")
        }
        stream.headersSubmitted = true
    }

    /// A whole response at once, as a unary call has it: the header block, the body and the
    /// trailers, submitted together (the body goes out as flow control allows, then the trailers).
    public func submitResponse(
        streamID: Int32, headers: HTTP2HeaderBlock, body: [UInt8], trailers: HTTP2HeaderBlock
    ) throws(HTTP2Error) {
        let stream = try streamBeforeHeaders(streamID)
        stream.queue.append(body)
        state.queuedBytes += body.count
        stream.trailers = trailers
        stream.isEnded = true
        var provider = NGHTTP2Calls.dataProvider(for: stream)
        let result = headers.withNameValues { nghttp2_submit_response(session, streamID, $0, $1, &provider) }
        try NGHTTP2Calls.check(result, "stream \(streamID): submitting a response")
        stream.headersSubmitted = true
    }

    /// Queues body bytes for the stream; they go out in DATA frames as flow control allows.
    public func sendData(streamID: Int32, bytes: [UInt8]) throws(HTTP2Error) {
        try NGHTTP2Calls.queue(bytes, on: try openStream(streamID), streamID: streamID, of: session, state)
    }

    /// Ends the response with trailers (END_STREAM on their HEADERS frame), after all queued data;
    /// empty `headers` end it with END_STREAM on the last DATA frame instead.
    public func submitTrailers(streamID: Int32, headers: HTTP2HeaderBlock) throws(HTTP2Error) {
        let stream = try openStream(streamID)
        guard stream.headersSubmitted, !stream.isEnded else {
            throw HTTP2Error(code: 0, message: "stream \(streamID): trailers before the headers or after the end")
        }
        stream.trailers = headers
        stream.isEnded = true
        try NGHTTP2Calls.resume(streamID, stream, of: session)
    }

    /// Resets the stream (RST_STREAM): a cancellation, or a slow consumer cut off. Its queued
    /// data is dropped at once.
    public func resetStream(streamID: Int32, errorCode: HTTP2ErrorCode) throws(HTTP2Error) {
        let result = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, errorCode.rawValue)
        try NGHTTP2Calls.check(result, "stream \(streamID): submitting RST_STREAM")
        if let stream = linkedStream(streamID) {
            state.queuedBytes -= stream.queue.count
            stream.queue = ByteQueue()
            stream.trailers = nil
            stream.isEnded = true
        }
    }

    /// Sends GOAWAY naming the last stream nghttp2 processed: those streams run to their end, no
    /// new one is accepted, and the connection is over (`wantsClose`) once they are done.
    public func submitGoaway(errorCode: HTTP2ErrorCode = .noError, debugData: [UInt8] = []) throws(HTTP2Error) {
        let lastStreamID = nghttp2_session_get_last_proc_stream_id(session)
        let result = nghttp2_submit_goaway(
            session, UInt8(NGHTTP2_FLAG_NONE.rawValue), lastStreamID, errorCode.rawValue, debugData, debugData.count)
        try NGHTTP2Calls.check(result, "submitting GOAWAY")
        state.goawaysSubmitted += 1
    }

    /// Sends a PING carrying `opaque` (nghttp2 answers the peer's own PINGs itself).
    public func submitPing(opaque: UInt64) throws(HTTP2Error) {
        let result = withUnsafeBytes(of: opaque) { bytes in
            nghttp2_submit_ping(
                session, UInt8(NGHTTP2_FLAG_NONE.rawValue), bytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        try NGHTTP2Calls.check(result, "submitting PING")
    }

    /// True once the session failed for good (after it, only its last bytes go out).
    public var hasFailed: Bool { state.isFatal }

    /// The first step of a graceful shutdown: a GOAWAY with the largest stream id, telling the
    /// client to open no more streams while requests already in flight still arrive; send
    /// `submitGoaway` a round trip later.
    public func submitShutdownNotice() throws(HTTP2Error) {
        try NGHTTP2Calls.check(nghttp2_submit_shutdown_notice(session), "submitting the shutdown notice")
        state.goawaysSubmitted += 1
    }

    // MARK: Queues

    /// Bytes of the stream's body submitted and not yet sent (flow control holds them): the
    /// caller's measure of a slow consumer.
    public func queuedBytes(streamID: Int32) -> Int { linkedStream(streamID)?.queue.count ?? 0 }

    /// Bytes submitted and not yet sent on all streams.
    public var queuedBytes: Int { state.queuedBytes }

    // MARK: Helpers

    /// The stream's output side, when nghttp2 still has the stream open: its user data, made
    /// and linked the first time (nghttp2's own lookup, no table of ours).
    private func openStream(_ streamID: Int32) throws(HTTP2Error) -> OutboundStream {
        guard !state.isFatal else { throw Self.notOpen(streamID) }
        if let stream = linkedStream(streamID) { return stream }
        guard let open = nghttp2_session_find_stream(session, streamID),
            nghttp2_stream_get_state(open) != NGHTTP2_STREAM_STATE_CLOSED
        else { throw Self.notOpen(streamID) }
        let stream = OutboundStream()
        guard nghttp2_session_set_stream_user_data(session, streamID, Unmanaged.passUnretained(stream).toOpaque()) == 0
        else { throw Self.notOpen(streamID) }
        state.link(stream)
        return stream
    }

    /// The open stream's output side, while its response headers have not been submitted.
    private func streamBeforeHeaders(_ streamID: Int32) throws(HTTP2Error) -> OutboundStream {
        let stream = try openStream(streamID)
        guard !stream.headersSubmitted else {
            throw HTTP2Error(code: 0, message: "stream \(streamID): response headers already submitted")
        }
        return stream
    }

    /// The output side linked to an open stream, if any.
    private func linkedStream(_ streamID: Int32) -> OutboundStream? {
        nghttp2_session_get_stream_user_data(session, streamID).map {
            Unmanaged<OutboundStream>.fromOpaque($0).takeUnretainedValue()
        }
    }

    private static func notOpen(_ streamID: Int32) -> HTTP2Error {
        HTTP2Error(code: Int32(NGHTTP2_ERR_STREAM_CLOSED.rawValue), message: "stream \(streamID) is not open")
    }
}
