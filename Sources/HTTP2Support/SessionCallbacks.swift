internal import CNGHTTP2

/// nghttp2's callbacks as C function pointers: each finds the `SessionState` in `user_data` and
/// hands the frame over to it. Nothing here may throw or keep a pointer nghttp2 lent it.
enum SessionCallbacks {
    /// Fills `callbacks` with every callback the sessions use (server and client alike).
    static func install(_ callbacks: OpaquePointer) {
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, onBeginHeaders)
        nghttp2_session_callbacks_set_on_header_callback(callbacks, onHeader)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, onFrameReceived)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, onDataChunk)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, onStreamClose)
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, onFrameSent)
        nghttp2_session_callbacks_set_error_callback2(callbacks, onError)
    }

    /// The read callback of every response's (or request's) data provider.
    /// Its source is the stream's `OutboundStream` (unretained: `SessionState.streams` holds it).
    static let readData: nghttp2_data_source_read_callback = { session, streamID, buffer, length, flags, source, user in
        SessionState.with(user) { state in
            Unmanaged<OutboundStream>.fromOpaque(source!.pointee.ptr)._withUnsafeGuaranteedRef { stream in
                state.readData(
                    session: session!, streamID: streamID, stream: stream, into: buffer!, capacity: length,
                    flags: flags!)
            }
        }
    }

    private static let onBeginHeaders: nghttp2_on_begin_headers_callback = { _, _, user in
        SessionState.with(user) { $0.beginHeaders() }
        return 0
    }

    private static let onHeader: nghttp2_on_header_callback = { _, _, name, nameLength, value, valueLength, _, user in
        let accepted = SessionState.with(user) {
            $0.header(
                name: UnsafeBufferPointer(start: name, count: nameLength),
                value: UnsafeBufferPointer(start: value, count: valueLength))
        }
        // A temporal failure resets this stream only (INTERNAL_ERROR) and skips the rest of the block.
        return accepted ? 0 : NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue
    }

    private static let onFrameReceived: nghttp2_on_frame_recv_callback = { _, frame, user in
        SessionState.with(user) { frameReceived(frame!, $0) }
    }

    private static func frameReceived(_ frame: UnsafePointer<nghttp2_frame>, _ state: SessionState) -> Int32 {
        let frame = frame.pointee
        let streamID = frame.hd.stream_id
        let endStream = frame.hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        if let delegate = state.delegate {
            switch UInt32(frame.hd.type) {
            case NGHTTP2_HEADERS.rawValue:
                if frame.headers.cat == NGHTTP2_HCAT_REQUEST {
                    state.withHeaderFields { delegate.request(streamID: streamID, headers: $0, endStream: endStream) }
                } else {
                    state.withHeaderFields { _ in }
                    if endStream { delegate.requestEnded(streamID: streamID) }
                }
            case NGHTTP2_DATA.rawValue:
                if endStream { delegate.requestEnded(streamID: streamID) }
            case NGHTTP2_RST_STREAM.rawValue:
                delegate.streamReset(
                    streamID: streamID, errorCode: HTTP2ErrorCode(rawValue: frame.rst_stream.error_code))
            default:
                break
            }
            return 0
        }
        switch UInt32(frame.hd.type) {
        case NGHTTP2_HEADERS.rawValue:
            let headers = state.takeHeaderBlock()
            if frame.headers.cat == NGHTTP2_HCAT_REQUEST {
                state.events.append(.request(streamID: streamID, headers: headers, endStream: endStream))
            } else if frame.headers.cat == NGHTTP2_HCAT_RESPONSE {
                state.events.append(.response(streamID: streamID, headers: headers, endStream: endStream))
            } else if frame.headers.cat == NGHTTP2_HCAT_HEADERS {
                state.events.append(.trailers(streamID: streamID, headers: headers))
            }
        case NGHTTP2_DATA.rawValue:
            let bytes = state.takeData(streamID: streamID)
            if !bytes.isEmpty {
                state.events.append(.data(streamID: streamID, bytes: bytes, endStream: endStream))
            } else if endStream {
                state.events.append(.endStream(streamID: streamID))
            }
        case NGHTTP2_RST_STREAM.rawValue:
            let code = HTTP2ErrorCode(rawValue: frame.rst_stream.error_code)
            state.events.append(.streamReset(streamID: streamID, errorCode: code))
        case NGHTTP2_GOAWAY.rawValue:
            let code = HTTP2ErrorCode(rawValue: frame.goaway.error_code)
            state.events.append(.goaway(lastStreamID: frame.goaway.last_stream_id, errorCode: code))
        default:
            break
        }
        return 0
    }

    private static let onDataChunk: nghttp2_on_data_chunk_recv_callback = { _, _, streamID, data, length, user in
        SessionState.with(user) { state in
            if let delegate = state.delegate {
                delegate.requestData(streamID: streamID, bytes: UnsafeRawBufferPointer(start: data, count: length))
            } else {
                state.dataChunk(streamID: streamID, UnsafeBufferPointer(start: data, count: length))
            }
        }
        return 0
    }

    private static let onStreamClose: nghttp2_on_stream_close_callback = { session, streamID, errorCode, user in
        // A server's output side is the stream's user data (held by the state, which lets it go).
        let linked = nghttp2_session_get_stream_user_data(session, streamID).map {
            Unmanaged<OutboundStream>.fromOpaque($0).takeUnretainedValue()
        }
        SessionState.with(user) { $0.streamClosed(streamID, errorCode: errorCode, linked: linked) }
        return 0
    }

    /// Tells the caller's GOAWAYs from nghttp2's own, which it queues when it ends the connection
    /// over an error it found (its reason is the frame's debug data).
    private static let onFrameSent: nghttp2_on_frame_send_callback = { _, frame, user in
        guard UInt32(frame!.pointee.hd.type) == NGHTTP2_GOAWAY.rawValue else { return 0 }
        let state = SessionState.from(user)
        if state.goawaysSubmitted > 0 {
            state.goawaysSubmitted -= 1
        } else {
            let goaway = frame!.pointee.goaway
            let debug = String(
                decoding: UnsafeBufferPointer(start: goaway.opaque_data, count: goaway.opaque_data_len), as: UTF8.self)
            let code = HTTP2ErrorCode(rawValue: goaway.error_code)
            state.fail(
                "HTTP/2 connection ended by nghttp2: GOAWAY \(code)" + (debug.isEmpty ? "" : " (\(debug))"),
                fatal: false)
        }
        return 0
    }

    /// The one connection error nghttp2 reports through this callback as it finds it: a first frame
    /// that is not SETTINGS (garbage after the preface). It queues a GOAWAY and ignores the rest.
    private static let onError: nghttp2_error_callback2 = { _, code, message, length, user in
        guard code == NGHTTP2_ERR_SETTINGS_EXPECTED.rawValue else { return 0 }
        let text = String(decoding: UnsafeRawBufferPointer(start: message, count: length), as: UTF8.self)
        SessionState.from(user).fail("HTTP/2 connection error: \(text)", fatal: false)
        return 0
    }
}
