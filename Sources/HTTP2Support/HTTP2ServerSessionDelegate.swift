/// What a server session tells as nghttp2 reads the peer's frames, when a delegate is set
/// (`HTTP2ServerSession.delegate`): each request's header block and body as they are read, with
/// nothing copied to carry them — the fields and the bytes are valid only during the call.
///
/// Called from inside `HTTP2ServerSession.receive`, on the session's thread; the delegate may
/// submit responses from these calls (nghttp2 allows it), but must not feed the session.
public protocol HTTP2ServerSessionDelegate: AnyObject {
    /// A request's header block (pseudo-headers included); `endStream` when it has no body.
    func request(streamID: Int32, headers: HTTP2HeaderFields, endStream: Bool)
    /// Bytes of a request's body (padding removed), as nghttp2 hands them over.
    func requestData(streamID: Int32, bytes: UnsafeRawBufferPointer)
    /// The client's side of the stream ended (END_STREAM on DATA, or its trailers).
    func requestEnded(streamID: Int32)
    /// The client reset the stream (RST_STREAM).
    func streamReset(streamID: Int32, errorCode: HTTP2ErrorCode)
    /// The stream closed other than by both sides ending it (a reset either way, the
    /// connection's GOAWAY): its queued output was dropped. A clean end is not told.
    func streamClosed(streamID: Int32, errorCode: HTTP2ErrorCode)
}
