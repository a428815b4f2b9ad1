import HTTP2Support
import ProtoBridge
import RPCCore

/// How calls' response parts and the connection's GOAWAY and PING travel on gRPC.
extension GRPCCodec {
    func takeOutput() {
        guard sawOutputPermission else { return }
        // Streams that closed as their last frames went out are told to the delegate.
        for case .connectionError(let reason) in http2.takeOutput(into: &core.outbound) {
            core.fail(.protocolViolation(reason))
        }
    }

    var hasPendingOutput: Bool { sawOutputPermission && http2.wantsWrite }
    var queuedBytes: Int { http2.queuedBytes }
    /// nghttp2's own: HPACK tables, streams, frames queued (the request messages held for calls
    /// not yet started are reserved in the budget as they arrive).
    var stateBytes: Int { http2.allocatedBytes }
    var wantsClose: Bool { refusedHTTP1 || http2.wantsClose }

    func writeReply(streamID: UInt32, _ message: ResponseMessage) {
        guard let stream = streams[streamID] else { return }
        reply(Int32(streamID), stream, framed(message))
    }

    func writeReply(streamID: UInt32, _ write: MessageWriter) {
        guard let stream = streams[streamID] else { return }
        // The message is written after room for its 5-byte prefix, which is filled in after it.
        var body: [UInt8] = []
        body.reserveCapacity(64)
        body.append(contentsOf: [0, 0, 0, 0, 0] as [UInt8])
        let compressed = write(&body)
        let length = body.count - 5
        body[0] = compressed ? 1 : 0
        body[1] = UInt8(truncatingIfNeeded: length >> 24)
        body[2] = UInt8(truncatingIfNeeded: length >> 16)
        body[3] = UInt8(truncatingIfNeeded: length >> 8)
        body[4] = UInt8(truncatingIfNeeded: length)
        reply(Int32(streamID), stream, body)
    }

    /// A unary call's whole answer: headers, its one message and OK trailers, submitted together.
    private func reply(_ id: Int32, _ stream: Stream, _ body: [UInt8]) {
        guard !stream.headersSent else {
            sendMessage(id, stream, body)
            return finish(id, stream, error: nil)
        }
        do throws(HTTP2Error) {
            try http2.submitResponse(
                streamID: id, headers: Self.responseHeaders(stream.responseEncoding), body: body,
                trailers: Self.okTrailers)
        } catch {
            // Gone already: the client reset it.
        }
        forgetClosed(id)
    }

    func writeMessage(streamID: UInt32, _ message: ResponseMessage) {
        let id = Int32(streamID)
        guard let stream = streams[streamID] else { return }
        sendMessage(id, stream, framed(message))
    }

    func writeEnd(streamID: UInt32, error: RPCError?, isStream: Bool) {
        let id = Int32(streamID)
        guard let stream = streams[streamID] else { return }
        finish(id, stream, error: error)
    }

    func callRemoved(streamID: UInt32) {
        forgetClosed(Int32(streamID))
    }

    func writeGoaway(lastStreamID: UInt32, error: RPCError, closing: Bool) {
        guard !http2.hasFailed else { return }
        let code: HTTP2ErrorCode = error.runtimeCode == .protocolViolation ? .protocolError : .noError
        let debug = Array("\(error.errorCode): \(error.message)".utf8.prefix(256))
        try? http2.submitGoaway(errorCode: code, debugData: debug)
    }

    func writePing(token: UInt64) {
        try? http2.submitPing(opaque: token)
    }

    func writeClosing(_ reason: ConnectionStateMachine.CloseReason) {
        let message: String
        switch reason {
        case .handshakeTimeout: message = "no request within the handshake timeout"
        case .keepaliveTimeout: message = "no answer to the keepalive PING"
        case .failure, .idle, .shutdown, .shutdownBeforeHandshake, .frameTimeout, .drained, .wireEnded,
            .transportClosed:
            return
        }
        guard sawOutputPermission, !http2.hasFailed else { return }
        try? http2.submitGoaway(errorCode: .noError, debugData: Array(message.utf8))
    }

    func connectionClosed() {
        for (id, _) in streams { forgetClosed(Int32(id)) }
    }

    // MARK: Helpers

    /// A message in gRPC's framing: the compressed flag, the length, the bytes.
    private func framed(_ message: ResponseMessage) -> [UInt8] {
        GRPCMessageReader.frame(message.bytes, compressed: message.compressed)
    }

    /// Sends one length-prefixed message on `stream` (its response headers first, once).
    private func sendMessage(_ id: Int32, _ stream: Stream, _ framed: [UInt8]) {
        do throws(HTTP2Error) {
            if !stream.headersSent {
                try http2.submitResponseHeaders(streamID: id, headers: Self.responseHeaders(stream.responseEncoding))
                stream.headersSent = true
            }
            try http2.sendData(streamID: id, bytes: framed)
        } catch {
            // The stream is gone (reset by the client): nothing more to send on it.
            forgetClosed(id)
            core.cancel(streamID: UInt32(id), reason: "the stream closed before the call completed")
        }
    }

    /// Ends a stream: trailers (or a trailers-only response when nothing was sent); the codec
    /// then lets go of it.
    private func finish(_ id: Int32, _ stream: Stream, error: RPCError?) {
        do throws(HTTP2Error) {
            if stream.headersSent {
                try http2.submitTrailers(
                    streamID: id, headers: Self.statusBlock(error, path: stream.path, trailersOnly: false))
            } else {
                try http2.submitResponseHeaders(
                    streamID: id, headers: Self.statusBlock(error, path: stream.path, trailersOnly: true),
                    endStream: true)
            }
        } catch {
            // Gone already: the client reset it.
        }
        forgetClosed(id)
    }

    // MARK: Header blocks

    /// Response headers, made once: the same few fields start every response.
    private static let plainResponseHeaders = responseHeaders(encoding: nil)
    private static let gzipResponseHeaders = responseHeaders(encoding: "gzip")
    private static let deflateResponseHeaders = responseHeaders(encoding: "deflate")
    /// The start of a trailers-only response (its status fields follow).
    private static let trailersOnlyStart = [
        HTTP2Header(":status", "200"), HTTP2Header("content-type", "application/grpc"),
    ]
    private static let okTrailers: HTTP2HeaderBlock = [HTTP2Header("grpc-status", "0")]
    /// A trailers-only response with OK (a bidirectional method that ended before it answered).
    private static let okTrailersOnly = HTTP2HeaderBlock(trailersOnlyStart + [HTTP2Header("grpc-status", "0")])

    private static func responseHeaders(encoding: String?) -> HTTP2HeaderBlock {
        var headers = [HTTP2Header(":status", "200"), HTTP2Header("content-type", "application/grpc")]
        if let encoding { headers.append(HTTP2Header("grpc-encoding", encoding)) }
        headers.append(HTTP2Header("grpc-accept-encoding", GRPCRequestHead.supportedEncodings))
        return HTTP2HeaderBlock(headers)
    }

    private static func responseHeaders(_ encoding: CompressionFormat?) -> HTTP2HeaderBlock {
        switch encoding {
        case nil: plainResponseHeaders
        case .gzip?: gzipResponseHeaders
        default: deflateResponseHeaders
        }
    }

    /// The status fields ending a call: the trailers after a response's messages, or with
    /// `trailersOnly` the whole response (`:status` and the content type first).
    private static func statusBlock(_ error: RPCError?, path: String, trailersOnly: Bool) -> HTTP2HeaderBlock {
        guard let error, error.code != .ok else { return trailersOnly ? okTrailersOnly : okTrailers }
        let fields = GRPCStatusFields.fields(for: error, path: path).map { HTTP2Header($0.name, $0.value) }
        return HTTP2HeaderBlock(trailersOnly ? trailersOnlyStart + fields : fields)
    }
}
