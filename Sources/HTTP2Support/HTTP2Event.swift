/// What the peer's bytes amounted to (`receive`), or what sending did (`takeOutput`), in the
/// order nghttp2 processed them.
///
/// The session's caller (the gRPC mapping, or a gRPC client) switches on these; everything HTTP/2 handles on its
/// own (SETTINGS, PING, WINDOW_UPDATE, HPACK, stream states) never shows up here.
public enum HTTP2Event: Sendable, Equatable {
    /// A request's header block (pseudo-headers included, in the order received); `endStream`
    /// when the request has no body.
    case request(streamID: Int32, headers: HTTP2HeaderBlock, endStream: Bool)
    /// A response's header block (`:status` first), on a client session only; `endStream` when it
    /// is the whole response (gRPC's trailers-only error).
    case response(streamID: Int32, headers: HTTP2HeaderBlock, endStream: Bool)
    /// The peer's trailers: a second header block, which always ends its side of the stream (the
    /// client's after a request body; the server's after a response body).
    case trailers(streamID: Int32, headers: HTTP2HeaderBlock)
    /// One DATA frame's payload (padding removed); `endStream` when it carried END_STREAM.
    case data(streamID: Int32, bytes: [UInt8], endStream: Bool)
    /// END_STREAM on an empty DATA frame: the request body ended with no more bytes.
    case endStream(streamID: Int32)
    /// The peer reset the stream (RST_STREAM); a `streamClosed` follows.
    case streamReset(streamID: Int32, errorCode: HTTP2ErrorCode)
    /// The stream is gone, for whatever reason (both sides ended, a reset either way, the
    /// connection's end); its queued output was dropped. `noError` after a normal end. It may
    /// name a stream no `.request` announced (its header block was over the limit).
    case streamClosed(streamID: Int32, errorCode: HTTP2ErrorCode)
    /// The peer is going away: streams above `lastStreamID` were not and will not be processed.
    case goaway(lastStreamID: Int32, errorCode: HTTP2ErrorCode)
    /// The connection failed (a bad preface — an HTTP/1.1 request, say —, a protocol error, a
    /// flood), reported once: nothing more is read; a GOAWAY nghttp2 queued goes out with the
    /// next `takeOutput`, and then `wantsClose` is true.
    case connectionError(String)
}
