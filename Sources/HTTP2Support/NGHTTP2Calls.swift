internal import CNGHTTP2

/// The nghttp2 calls the server and the client session make alike: making the session, queueing
/// its SETTINGS, draining its output, feeding a stream's data provider, and turning nghttp2's
/// negative results into `HTTP2Error`s. One place, so that both sides of a connection treat
/// nghttp2 the same way.
enum NGHTTP2Calls {
    /// A new nghttp2 session whose callbacks are `SessionCallbacks` and whose `user_data` is
    /// `state`. Closed streams are not kept: they serve only RFC 7540's priority tree, which
    /// gRPC does not use.
    /// - Parameters:
    ///   - configure: sets the side's other options.
    ///   - create: the side's `nghttp2_session_…_new` over the session to fill, the callbacks,
    ///     the user data and the options.
    static func makeSession(
        state: SessionState, configure: (OpaquePointer?) -> Void = { _ in },
        create: (UnsafeMutablePointer<OpaquePointer?>, OpaquePointer?, UnsafeMutableRawPointer, OpaquePointer?) ->
            Int32
    ) -> OpaquePointer {
        var callbacks: OpaquePointer?
        precondition(nghttp2_session_callbacks_new(&callbacks) == 0, "nghttp2: out of memory")
        defer { nghttp2_session_callbacks_del(callbacks) }
        SessionCallbacks.install(callbacks!)

        var option: OpaquePointer?
        precondition(nghttp2_option_new(&option) == 0, "nghttp2: out of memory")
        defer { nghttp2_option_del(option) }
        nghttp2_option_set_no_closed_streams(option, 1)
        configure(option)

        var session: OpaquePointer?
        let status = create(&session, callbacks, Unmanaged.passUnretained(state).toOpaque(), option)
        precondition(status == 0 && session != nil, "nghttp2: out of memory")
        return session!
    }

    /// Queues the session's SETTINGS frame; `what` names them in the message of a refusal, which
    /// is a programming error (the values are checked where they are chosen).
    static func submitSettings(
        _ session: OpaquePointer, _ entries: [(id: nghttp2_settings_id, value: UInt32)], what: String
    ) {
        let settings = entries.map { nghttp2_settings_entry(settings_id: Int32($0.id.rawValue), value: $0.value) }
        let submitted = nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), settings, settings.count)
        precondition(submitted == 0, "nghttp2 refused \(what): \(text(submitted))")
    }

    /// Appends everything nghttp2 has to send now to `buffer`; returns the events sending made,
    /// and `.connectionError` when the connection failed during it.
    static func takeOutput(
        of session: OpaquePointer, _ state: SessionState, into buffer: inout [UInt8]
    ) -> [HTTP2Event] {
        let failedBefore = state.connectionError != nil
        while true {
            var data: UnsafePointer<UInt8>?
            let n = nghttp2_session_mem_send(session, &data)
            if n < 0 {
                state.fail("HTTP/2 connection error while sending: \(text(Int32(n)))", fatal: true)
                break
            }
            guard n > 0, let data else { break }
            state.sentOutput = true
            buffer.append(contentsOf: UnsafeBufferPointer(start: data, count: n))
        }
        var events = state.events
        state.events = []
        if !failedBefore, let reason = state.connectionError { events.append(.connectionError(reason)) }
        return events
    }

    /// The data provider of a stream's body: it reads `stream`'s queue, which `SessionState`
    /// holds until nghttp2 closes the stream (after which it never reads from the provider).
    static func dataProvider(for stream: OutboundStream) -> nghttp2_data_provider {
        nghttp2_data_provider(
            source: nghttp2_data_source(ptr: Unmanaged.passUnretained(stream).toOpaque()),
            read_callback: SessionCallbacks.readData)
    }

    /// Queues body bytes on an open stream that has not ended, and wakes its data provider.
    static func queue(
        _ bytes: [UInt8], on stream: OutboundStream, streamID: Int32, of session: OpaquePointer, _ state: SessionState
    ) throws(HTTP2Error) {
        guard !stream.isEnded else { throw HTTP2Error(code: 0, message: "stream \(streamID): data after the end") }
        stream.queue.append(bytes)
        state.queuedBytes += bytes.count
        try resume(streamID, stream, of: session)
    }

    /// Wakes the stream's data provider if it was waiting for data.
    static func resume(_ streamID: Int32, _ stream: OutboundStream, of session: OpaquePointer) throws(HTTP2Error) {
        guard stream.isDeferred else { return }
        stream.isDeferred = false
        try check(nghttp2_session_resume_data(session, streamID), "stream \(streamID): resuming its data")
    }

    /// Throws for a negative nghttp2 result; `what` is made only then (not on every call).
    static func check(_ result: Int32, _ what: @autoclosure () -> String) throws(HTTP2Error) {
        if result < 0 { throw HTTP2Error(code: result, message: "\(what()): \(text(result))") }
    }

    /// nghttp2's text for one of its error codes.
    static func text(_ code: Int32) -> String { String(cString: nghttp2_strerror(code)) }
}
