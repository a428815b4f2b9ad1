import HTTP2Support
import ProtoBridge
public import RPCCore

/// What a server serves on standard gRPC besides its method table, and the factory of the codec
/// every gRPC connection gets (`ServerEnvironment.grpc`).
public struct GRPCWire: WireCodecFactory {
    /// Bidirectional methods the codec serves itself (server reflection): the method table holds
    /// unary and server-streaming methods only.
    public var bidirectional: [any GRPCBidirectionalService]

    public init(bidirectional: [any GRPCBidirectionalService] = []) {
        self.bidirectional = bidirectional
    }

    public func makeCodec(for core: ConnectionCore) -> any WireCodec {
        GRPCCodec(core: core, bidirectional: bidirectional)
    }
}

/// A bidirectional method the gRPC codec serves itself (the method table holds unary and
/// server-streaming methods only): one response message per request message, the stream ended
/// with OK when the client half-closes. Server reflection is one. A class: each stream of its
/// methods holds a reference to it.
public protocol GRPCBidirectionalService: AnyObject, Sendable {
    /// The method paths it answers.
    var paths: [String] { get }
    /// The encoded response to one encoded request message on `path`.
    func respond(path: String, to message: [UInt8]) throws(RPCError) -> [UInt8]
}

/// Standard gRPC (HTTP/2, over nghttp2) as a connection's wire: requests' header blocks and
/// length-prefixed messages in, response headers, messages and trailers out.
///
/// What a request means for the connection — its key, its admission, its call, a reset — goes to
/// the `ConnectionCore`, which holds the rules both wires share; this codec keeps only what is
/// HTTP/2's and gRPC's own: the nghttp2 session, each stream's message reassembly and response
/// headers, and how a call's end travels (trailers, or a trailers-only response; the `ERR_…`
/// code in `grpc-status-details-bin`).
///
/// Input is fed to nghttp2 one whole HTTP/2 frame at a time: the connection's backpressure is
/// checked before every frame, as on our protocol, and a frame that has begun must complete
/// within the frame timeout (the transport keeps its bytes and counts them in the budget;
/// nghttp2 never holds a partial frame).
///
/// Confined to its connection's event loop.
final class GRPCCodec: WireCodec, HTTP2ServerSessionDelegate {
    let wire = WireKind.grpc

    /// One request stream: what the codec keeps of it until its end is written. A class, so
    /// the table holds a reference that each event changes in place.
    final class Stream {
        /// The method path, for the end's ErrorInfo domain.
        let path: String
        /// The method, for a call of the method table.
        let method: RegisteredMethod?
        /// The service, for a bidirectional method the codec serves.
        let bidirectional: (any GRPCBidirectionalService)?
        /// `grpc-encoding` of the request's messages: nil for identity.
        let messageEncoding: CompressionFormat?
        /// The response's messages are compressed with this (from `grpc-accept-encoding`).
        let responseEncoding: CompressionFormat?
        var reader = GRPCMessageReader()
        /// The request message of a unary or server-streaming call (exactly one is allowed).
        var request: GRPCMessageReader.Message?
        var headersSent = false
        /// Request bytes held (an incomplete message, a whole one awaiting END_STREAM), reserved
        /// in the memory budget.
        var reserved = 0

        init(
            path: String, method: RegisteredMethod?, bidirectional: (any GRPCBidirectionalService)?,
            messageEncoding: CompressionFormat?, responseEncoding: CompressionFormat?
        ) {
            self.path = path
            self.method = method
            self.bidirectional = bidirectional
            self.messageEncoding = messageEncoding
            self.responseEncoding = responseEncoding
        }
    }

    /// Invariant: the core owns this codec and outlives it (unowned(unsafe): no reference count
    /// is checked on the per-frame path).
    unowned(unsafe) let core: ConnectionCore
    let http2: HTTP2ServerSession
    /// The server's, kept here: reached through the core, a struct of its environment would be
    /// copied for each.
    let budget: MemoryBudget
    let maxMessageBytes: Int
    /// The paths of the bidirectional services, read once (a service's `paths` may be made on
    /// every read): a request's path is looked up here before the method table.
    private let bidirectionalPaths: [(path: String, service: any GRPCBidirectionalService)]
    /// The last request's path and the bidirectional service it names (mostly none): a request
    /// for the same path (the same string, `GRPCRequestHead.Recent`) is not looked up again.
    @exclusivity(unchecked) private var recentPath = ""
    @exclusivity(unchecked) private var recentBidirectional: (any GRPCBidirectionalService)?
    /// The properties touched on every call are `@exclusivity(unchecked)`: the codec is confined
    /// to its loop's thread and none of its methods starts an access to one while another is
    /// under way, so the runtime's check would guard against nothing.
    @exclusivity(unchecked) var streams = StreamIDMap<Stream>()
    /// The events of the frame being fed beyond what the delegate is told (a connection error),
    /// kept from frame to frame.
    @exclusivity(unchecked) private var events: [HTTP2Event] = []
    /// A DATA frame's bytes read in place, not yet copied: when its END_STREAM follows in the same
    /// frame (a unary request's one DATA frame), the call starts from them with no copy; else they
    /// are copied into the stream's reader when the frame has been fed.
    @exclusivity(unchecked) private var borrowed: (streamID: UInt32, bytes: UnsafeRawBufferPointer)?
    /// The last request head's path, app and key, whose strings the next head reuses when equal.
    @exclusivity(unchecked) private var recentHead = GRPCRequestHead.Recent()
    /// Request bytes held over all streams (see `Stream.reserved`), against `maxBufferedInput`.
    @exclusivity(unchecked) private var bufferedInput = 0
    /// The client's first bytes have arrived (the server's preface waits for them).
    private(set) var sawInput = false
    /// The connection preface (24 bytes) has been fed.
    private var sawPreface = false
    /// An HTTP/1 client was answered in HTTP/1: nothing of HTTP/2 goes out.
    private(set) var refusedHTTP1 = false

    /// HTTP/2's output may go out: the client spoke first, and spoke HTTP/2.
    var sawOutputPermission: Bool { sawInput && !refusedHTTP1 }

    init(core: ConnectionCore, bidirectional: [any GRPCBidirectionalService]) {
        self.core = core
        budget = core.environment.memoryBudget
        maxMessageBytes = core.limits.maxMessageBytes
        bidirectionalPaths = bidirectional.flatMap { service in service.paths.map { ($0, service) } }
        var settings = HTTP2ServerConfiguration()
        settings.maxConcurrentStreams = UInt32(core.limits.maxConcurrentCalls)
        settings.initialWindowSize = UInt32(Self.streamWindow)
        http2 = HTTP2ServerSession(configuration: settings)
        http2.delegate = self
    }

    /// The HTTP/2 stream window the server announces: big enough that a request of a few hundred
    /// KiB needs no WINDOW_UPDATE round trip, small enough that what streams may send ahead stays
    /// bounded (the connection also refuses past `maxBufferedInput`).
    static let streamWindow = 1 << 20

    /// Request bytes one connection may hold for calls not yet started (incomplete messages, and
    /// whole ones waiting for END_STREAM) over all its streams: twice the message limit, so two
    /// large requests may arrive side by side. The stream whose bytes pass it is refused
    /// (RESOURCE_EXHAUSTED, `ERR_OVERLOADED`).
    private var maxBufferedInput: Int { 2 * maxMessageBytes + 64 * 1024 }

    // MARK: Input

    /// HTTP/2's client connection preface.
    static let prefaceSize = 24
    /// An HTTP/2 frame's header.
    static let frameHeaderSize = 9

    func receive(_ bytes: UnsafeRawBufferPointer, outboundLimit: Int, frameLimit: Int) -> (consumed: Int, needed: Int) {
        if !sawInput {
            sawInput = true
            if Self.looksLikeHTTP1(bytes) {
                refuseHTTP1()
                return (bytes.count, 0)
            }
        }
        var offset = 0
        if !sawPreface {
            guard bytes.count >= Self.prefaceSize else { return (0, Self.prefaceSize) }
            feed(UnsafeRawBufferPointer(rebasing: bytes[0..<Self.prefaceSize]))
            sawPreface = true
            offset = Self.prefaceSize
        }
        var frames = 0
        while core.isReading && !http2.hasFailed {
            guard core.mayDecodeFrame(after: frames, outboundLimit: outboundLimit, frameLimit: frameLimit) else {
                return (offset, 0)
            }
            let available = bytes.count - offset
            guard available >= Self.frameHeaderSize else {
                core.inputLeft(incomplete: available > 0)
                return (offset, Self.frameHeaderSize)
            }
            let length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
            if length > Int(http2.configuration.maxFrameSize) {
                // nghttp2 refuses it from its header: the peer never makes the server wait for it.
                feed(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + Self.frameHeaderSize]))
                return (bytes.count, 0)
            }
            let total = Self.frameHeaderSize + length
            guard available >= total else {
                core.inputLeft(incomplete: true)
                return (offset, total)
            }
            feed(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + total]))
            offset += total
            frames += 1
            core.inboundFrame()
        }
        return (offset, 0)
    }

    /// Feeds one frame (or the preface) to nghttp2, which tells the codec (its delegate) what it
    /// completed; what is left of a DATA frame read in place is copied before its bytes go.
    private func feed(_ bytes: UnsafeRawBufferPointer) {
        http2.receive(bytes, into: &events)
        if borrowed != nil { keepBorrowed() }
        guard !events.isEmpty else { return }
        for case .connectionError(let reason) in events {
            if http2.refusedPreface { core.handshakeRefused(.badPreface) }
            core.fail(.protocolViolation(reason))
        }
        events.removeAll(keepingCapacity: true)
    }

    /// True when the first bytes of a connection are an HTTP/1 request line rather than HTTP/2's
    /// preface (`PRI * HTTP/2.0`): a method token, a space, and `HTTP/1.` on the line.
    static func looksLikeHTTP1(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let line = bytes.prefix(while: { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") })
        guard let space = line.firstIndex(of: UInt8(ascii: " ")), space > 0,
            line[..<space].allSatisfy({ $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") })
        else { return false }
        let text = String(decoding: line, as: UTF8.self)
        return !text.hasPrefix("PRI ") && text.contains(" HTTP/1.")
    }

    /// An HTTP/1 client (curl without --http2-prior-knowledge, a browser, an HTTP/1 health
    /// check) gets an HTTP/1.1 answer it can read, saying what this port speaks, and the
    /// connection closes; nothing of HTTP/2 was sent to it (the server's preface waits for the
    /// client's first bytes).
    private func refuseHTTP1() {
        let body =
            "this port speaks gRPC over HTTP/2 (h2c with prior knowledge, or h2 under TLS) and this server's own "
            + "framed protocol; not HTTP/1\n"
        let response =
            "HTTP/1.1 505 HTTP Version Not Supported\r\ncontent-type: text/plain\r\ncontent-length: \(body.utf8.count)\r\n"
            + "connection: close\r\n\r\n" + body
        core.outbound.append(contentsOf: response.utf8)
        core.environment.observer?.transportEvent(.connectionRefused(.protocolMismatch))
        core.handshakeRefused(.badPreface)
        core.logger.debug("closing connection: an HTTP/1 request")
        refusedHTTP1 = true
    }

    // MARK: What nghttp2 read (HTTP2ServerSessionDelegate)

    func request(streamID id: Int32, headers: HTTP2HeaderFields, endStream: Bool) {
        openStream(id, headers: headers)
        if endStream { requestEnded(streamID: id) }
    }

    func requestData(streamID id: Int32, bytes: UnsafeRawBufferPointer) {
        let streamID = UInt32(id)
        guard let stream = streams[streamID], core.isLive(streamID) else { return }
        if borrowed == nil, stream.bidirectional == nil, stream.request == nil, stream.reader.pending.isEmpty {
            borrowed = (streamID, bytes)
            return
        }
        if borrowed != nil { keepBorrowed() }
        received(Array(bytes), on: stream, id)
    }

    func requestEnded(streamID id: Int32) {
        let streamID = UInt32(id)
        guard let stream = streams[streamID], core.isLive(streamID) else { return }
        if let borrowed, borrowed.streamID == streamID {
            self.borrowed = nil
            do throws(RPCError) {
                if let method = stream.method,
                    let message = try GRPCMessageReader.single(in: borrowed.bytes, limit: maxMessageBytes)
                {
                    // The whole request in this frame: started from the bytes in place.
                    guard !message.compressed || stream.messageEncoding != nil else {
                        return refuseRequest(
                            id,
                            .protocolViolation("a message is flagged compressed but the request names no grpc-encoding")
                        )
                    }
                    return core.requestArrived(
                        streamID: streamID, method: method,
                        ConnectionCore.RequestBody(
                            bytes: message.body, encoding: message.compressed ? stream.messageEncoding : nil))
                }
            } catch {
                return refuseRequest(id, error)
            }
            received(Array(borrowed.bytes), on: stream, id)
        }
        requestEnded(id, stream)
    }

    func streamReset(streamID id: Int32, errorCode: HTTP2ErrorCode) {
        forgetClosed(id)
        core.cancel(streamID: UInt32(id), reason: "the client reset the stream")
    }

    func streamClosed(streamID id: Int32, errorCode: HTTP2ErrorCode) {
        forgetClosed(id)
        core.cancel(streamID: UInt32(id), reason: "the stream closed before the call completed")
    }

    /// The DATA bytes read in place, copied into their stream's reader before they go.
    private func keepBorrowed() {
        guard let borrowed else { return }
        self.borrowed = nil
        guard let stream = streams[borrowed.streamID], core.isLive(borrowed.streamID) else { return }
        received(Array(borrowed.bytes), on: stream, Int32(borrowed.streamID))
    }

    // MARK: Requests

    private func openStream(_ id: Int32, headers: HTTP2HeaderFields) {
        let streamID = UInt32(id)
        let head: GRPCRequestHead
        do throws(GRPCRequestHead.Refusal) {
            head = try GRPCRequestHead.parse(headers, recent: &recentHead)
        } catch {
            switch error {
            case .http(let status, let message):
                refuseHTTP(id, status: status, message: message)
            case .grpc(let rpcError):
                let path = headers.first(named: ":path") ?? ""
                track(
                    id, Stream(path: path, method: nil, bidirectional: nil, messageEncoding: nil, responseEncoding: nil)
                )
                core.refuse(
                    streamID: streamID, rpcError, head: CallHead(path: path, byteCount: headers.listSize),
                    caller: .anonymous)
            }
            return
        }
        let callHead = head.call
        if head.path != recentPath {
            recentPath = head.path
            recentBidirectional = bidirectionalPaths.first { $0.path == head.path }?.service
        }
        let bidirectional = recentBidirectional
        let caller: Authenticated
        let method: RegisteredMethod?
        do throws(RPCError) {
            caller = try core.authenticateRequest(apiKey: head.apiKey, appID: head.appID)
        } catch {
            track(
                id,
                Stream(path: head.path, method: nil, bidirectional: nil, messageEncoding: nil, responseEncoding: nil))
            core.refuse(streamID: streamID, error, head: callHead, caller: .anonymous)
            return
        }
        do throws(RPCError) {
            method = try core.admit(callHead, caller: caller, wireServed: bidirectional != nil)
        } catch {
            track(
                id,
                Stream(path: head.path, method: nil, bidirectional: nil, messageEncoding: nil, responseEncoding: nil))
            core.refuse(
                streamID: streamID, error, head: callHead, caller: caller,
                methodIndex: core.environment.methods[head.path]?.index)
            return
        }
        let responseEncoding = head.acceptedEncodings.first
        track(
            id,
            Stream(
                path: head.path, method: method, bidirectional: bidirectional, messageEncoding: head.messageEncoding,
                responseEncoding: responseEncoding))
        core.open(
            streamID: streamID, head: callHead, method: method, caller: caller,
            compression: responseEncoding.map { .grpc($0) } ?? .none, request: nil)
    }

    private func track(_ id: Int32, _ stream: Stream) {
        streams[UInt32(id)] = stream
    }

    /// A request's body bytes: messages taken from them (one for a unary or server-streaming
    /// call; each answered for a bidirectional one), and what waits for more counted.
    private func received(_ bytes: [UInt8], on stream: Stream, _ id: Int32) {
        do throws(RPCError) {
            if let service = stream.bidirectional {
                try stream.reader.append(bytes, limit: maxMessageBytes) { message throws(RPCError) in
                    answer(id, stream, service: service, message: message)
                }
            } else {
                try stream.reader.append(bytes, limit: maxMessageBytes) { message throws(RPCError) in
                    guard stream.request == nil else {
                        throw .invalidArgument("\(stream.path) takes one request message; the client sent more")
                    }
                    stream.request = message
                }
            }
        } catch {
            return refuseRequest(id, error)
        }
        settleBuffered(stream)
        if bufferedInput > maxBufferedInput || (stream.reserved > 0 && budget.isUnderPressure) {
            return refuseRequest(
                id,
                .overloaded(
                    "the connection holds more than \(maxBufferedInput) bytes of request messages for calls not yet "
                        + "started, or the server's memory budget is short; retry later"))
        }
    }

    /// A request that cannot run (a second message, one too large, not gRPC's framing): its call
    /// is refused as any refusal is.
    private func refuseRequest(_ id: Int32, _ error: RPCError) {
        core.refuseOpen(streamID: UInt32(id), error)
    }

    /// Keeps the budget's count and the connection's in step with the request bytes a stream
    /// holds: its incomplete message, and a whole one waiting for END_STREAM.
    private func settleBuffered(_ stream: Stream) {
        let now = stream.reader.pending.count + (stream.request?.bytes.count ?? 0)
        guard now != stream.reserved else { return }
        if now > stream.reserved {
            budget.reserve(now - stream.reserved, for: .inbound)
        } else {
            budget.release(stream.reserved - now, for: .inbound)
        }
        bufferedInput += now - stream.reserved
        stream.reserved = now
    }

    private func releaseBuffered(_ stream: Stream) {
        guard stream.reserved > 0 else { return }
        budget.release(stream.reserved, for: .inbound)
        bufferedInput -= stream.reserved
        stream.reserved = 0
    }

    /// The client half-closed: a unary or server-streaming call starts with its one message; a
    /// bidirectional one the codec serves ends OK.
    private func requestEnded(_ id: Int32, _ stream: Stream) {
        guard stream.reader.pending.isEmpty else {
            return refuseRequest(
                id, .protocolViolation("the request ended inside a message (its length prefix promised more)"))
        }
        if stream.bidirectional != nil {
            return core.endWireServed(streamID: UInt32(id), error: nil)
        }
        guard let method = stream.method, let message = stream.request else {
            return refuseRequest(id, .invalidArgument("\(stream.path) takes one request message; the client sent none"))
        }
        if message.compressed && stream.messageEncoding == nil {
            return refuseRequest(
                id, .protocolViolation("a message is flagged compressed but the request names no grpc-encoding"))
        }
        stream.request = nil
        if stream.reserved > 0 { settleBuffered(stream) }
        message.bytes.withUnsafeBytes { body in
            core.requestArrived(
                streamID: UInt32(id), method: method,
                ConnectionCore.RequestBody(bytes: body, encoding: message.compressed ? stream.messageEncoding : nil))
        }
    }

    /// One message of a bidirectional method the codec serves: one response message.
    private func answer(
        _ id: Int32, _ stream: Stream, service: any GRPCBidirectionalService, message: GRPCMessageReader.Message
    ) {
        do throws(RPCError) {
            var body = Array(message.bytes)
            if message.compressed {
                guard let encoding = stream.messageEncoding else {
                    throw .protocolViolation("a message is flagged compressed but the request names no grpc-encoding")
                }
                var inflated: [UInt8] = []
                do throws(Inflater.Failure) {
                    try MessageCompression.inflater(encoding).inflateIndependent(
                        body, limit: maxMessageBytes, appendingTo: &inflated)
                } catch {
                    throw ConnectionCore.inflateError(error, encoding)
                }
                body = inflated
            }
            let response = try service.respond(path: stream.path, to: body)
            writeMessage(streamID: UInt32(id), MessageCompression.none.independent(response))
        } catch {
            core.endWireServed(streamID: UInt32(id), error: error)
        }
    }

    /// Not gRPC at all (another method, another content type): an HTTP status and a text body.
    private func refuseHTTP(_ id: Int32, status: Int, message: String) {
        core.logger.debug("request refused", [("stream", String(id)), ("status", String(status)), ("reason", message)])
        try? http2.submitResponseHeaders(
            streamID: id,
            headers: [HTTP2Header(":status", String(status)), HTTP2Header("content-type", "text/plain")])
        try? http2.sendData(streamID: id, bytes: Array((message + "\n").utf8))
        try? http2.submitTrailers(streamID: id, headers: [])
    }

    /// The codec lets go of a stream (its end was written, or it is gone).
    func forgetClosed(_ id: Int32) {
        guard let stream = streams.removeValue(forKey: UInt32(id)) else { return }
        releaseBuffered(stream)
    }
}
