import HTTP2Support
import ProtoBridge
public import RPCCore
import RPCMessages

/// One gRPC connection's protocol: HTTP/2 requests in, the runtime's calls run, their replies,
/// stream messages and ends out as gRPC responses.
///
/// The gRPC counterpart of `ServerSession`, and like it without sockets: the transport feeds it
/// bytes and events and carries out the `TransportActions` each returns, writing what
/// `takeOutput` gives once per loop turn. Calls go through the same admission and start as on
/// our protocol (`ServerSession.Environment.admit` and `start`), so every rule, limit, metric and
/// log line is the same. Handlers complete as they always do, with frames of our protocol through
/// the call's port; the session translates them: a REPLY becomes response headers, one message
/// and trailers (or a trailers-only response for an error), a stream MESSAGE one message, TRAILERS
/// the trailers. Reflection, a bidirectional method the method table cannot hold, is served here
/// by a `GRPCBidirectionalService`.
///
/// Confined to its connection's event loop; completions from other threads reach it through the
/// port, which brings them back to the loop.
public final class GRPCSession {
    /// What the session serves besides the method table.
    public struct Configuration: Sendable {
        /// Bidirectional methods served by the session itself (server reflection).
        public var bidirectional: [any GRPCBidirectionalService]

        public init(bidirectional: [any GRPCBidirectionalService] = []) {
            self.bidirectional = bidirectional
        }
    }

    /// One request stream and, once started, its call: a class, so the session's table holds a
    /// reference that each event changes in place. Its state changing per call is unchecked for
    /// exclusivity, as the session's own (see `streams`).
    private final class Stream {
        let head: GRPCRequestHead
        let app: String
        /// The method, for a call of the method table.
        let method: RegisteredMethod?
        /// The service, for a bidirectional method the session serves.
        let bidirectional: (any GRPCBidirectionalService)?
        @exclusivity(unchecked) var reader = GRPCMessageReader()
        /// The request message of a unary or server-streaming call (exactly one is allowed).
        @exclusivity(unchecked) var request: GRPCMessageReader.Message?
        @exclusivity(unchecked) var call: ServerCall?
        var deadline: UInt64?
        @exclusivity(unchecked) var headersSent = false
        /// The response's messages are compressed with this (chosen from `grpc-accept-encoding`).
        let responseEncoding: CompressionFormat?
        /// Request bytes held (an incomplete message, a whole one awaiting END_STREAM), reserved
        /// in the memory budget.
        @exclusivity(unchecked) var reserved = 0
        /// The end was sent (or the stream is otherwise done): later input and deliveries are dropped.
        @exclusivity(unchecked) var ended = false
        let startedAt: UInt64

        init(
            head: GRPCRequestHead, app: String, method: RegisteredMethod?,
            bidirectional: (any GRPCBidirectionalService)?, deadline: UInt64?, responseEncoding: CompressionFormat?,
            startedAt: UInt64
        ) {
            self.head = head
            self.app = app
            self.method = method
            self.bidirectional = bidirectional
            self.deadline = deadline
            self.responseEncoding = responseEncoding
            self.startedAt = startedAt
        }
    }

    /// Bytes to write to the peer: `takeOutput` appends here, the transport removes what it wrote.
    public var outbound: [UInt8] = []
    /// The buffer `deliverInline` lends handlers for their frame, kept from call to call (the
    /// frame is translated, and its message copied into the response, before it returns).
    @exclusivity(unchecked) private var inlineFrame: [UInt8] = []

    private let environment: ServerSession.Environment
    private let configuration: Configuration
    /// The paths of `configuration.bidirectional`, read once (a service's `paths` may be made
    /// on every read): a request's path is looked up here before the method table.
    private let bidirectionalPaths: [(path: String, service: any GRPCBidirectionalService)]
    private let limits: ServerLimits
    private let http2: HTTP2ServerSession
    private let port: any CallPort
    private var logger: Logger
    public let peer: String
    /// The properties touched on every call (`streams`, `now`, `bufferedInput`, and the like) are
    /// `@exclusivity(unchecked)`: the session is confined to its loop's thread and none of its
    /// methods starts an access to one while another is under way, so the runtime's check (some
    /// 80 instructions an access, about ten a call) would guard against nothing.
    @exclusivity(unchecked) private var streams: [Int32: Stream] = [:]
    /// Calls of the closed connection not yet ended (`endClosedCalls`).
    private var callsToEnd = CallsToEnd()
    private var draining = false
    private var closing = false
    @exclusivity(unchecked) private var now: UInt64 = 0
    private let openedAt: UInt64
    /// The last time the connection had no stream (for the idle timeout), nil while it has some.
    @exclusivity(unchecked) private var idleSince: UInt64?
    @exclusivity(unchecked) private var sawRequest = false
    /// The client has sent its first bytes (the server's preface waits for them).
    private var sawInput = false
    private var refusedHTTP1 = false
    @exclusivity(unchecked) private var armedDeadline: UInt64 = .max
    @exclusivity(unchecked) private var deadlineToArm: ServerSession.TransportActions.DeadlineTimer?
    /// The last key that authenticated, and its app: a connection sends the same key on every
    /// request, and the key store's constant-time check need not run again for it.
    private var lastKey: (appID: String, apiKey: String, app: String)?
    /// Request bytes held over all streams (see `Stream.reserved`), against `maxBufferedInput`.
    @exclusivity(unchecked) private var bufferedInput = 0
    /// The last request head's path, app and key, whose strings the next head reuses when equal.
    @exclusivity(unchecked) private var recentHead = GRPCRequestHead.Recent()

    public init(environment: ServerSession.Environment, configuration: Configuration, port: any CallPort, peer: String)
    {
        self.environment = environment
        self.configuration = configuration
        bidirectionalPaths = configuration.bidirectional.flatMap { service in service.paths.map { ($0, service) } }
        limits = environment.limits
        self.port = port
        self.peer = peer
        logger = environment.logger.with("peer", peer).with("listener", "grpc")
        var settings = HTTP2ServerConfiguration()
        settings.maxConcurrentStreams = UInt32(environment.limits.maxConcurrentCalls)
        settings.initialWindowSize = UInt32(Self.streamWindow)
        http2 = HTTP2ServerSession(configuration: settings)
        openedAt = environment.now()
        idleSince = openedAt
    }

    /// The HTTP/2 stream window the server announces: big enough that a request of a few hundred
    /// KiB needs no WINDOW_UPDATE round trip, small enough that what streams may send ahead stays
    /// bounded (the connection also refuses past `maxBufferedInput`).
    static let streamWindow = 1 << 20

    /// Request bytes one connection may hold for calls not yet started (incomplete messages, and
    /// whole ones waiting for END_STREAM) over all its streams: twice the message limit, so two large requests may arrive side by side. The stream whose bytes pass
    /// it is refused (RESOURCE_EXHAUSTED, `ERR_OVERLOADED`).
    private var maxBufferedInput: Int { 2 * limits.maxMessageBytes + 64 * 1024 }

    /// Calls in flight.
    public var liveCallCount: Int { streams.count }

    /// True once the connection should close after `outbound` is written.
    public var closeRequested: Bool { closing || http2.wantsClose }

    /// HTTP/2 has frames to send that `takeOutput` has not taken yet.
    public var hasPendingOutput: Bool { sawInput && !refusedHTTP1 && http2.wantsWrite }

    /// Bytes the HTTP/2 session holds unsent for its streams (a reader's closed window): what
    /// the transport adds to its unwritten output for the streams' slow-consumer check.
    public var queuedBytes: Int { http2.queuedBytes }

    // MARK: Input

    /// Feeds bytes read from the socket.
    public func receive(_ bytes: UnsafeRawBufferPointer) -> ServerSession.TransportActions {
        now = environment.now()
        if !sawInput {
            sawInput = true
            if Self.looksLikeHTTP1(bytes) {
                refuseHTTP1()
                return transportActions()
            }
        }
        for event in http2.receive(bytes) { handle(event) }
        return transportActions()
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
    /// check) gets an HTTP/1.1 answer it can read, saying what this listener speaks, and the
    /// connection closes; nothing of HTTP/2 was sent to it (the server's preface waits for the
    /// client's first bytes).
    private func refuseHTTP1() {
        let body = "this is a gRPC listener: it speaks HTTP/2 only (h2c with prior knowledge, as gRPC clients do)\n"
        let response =
            "HTTP/1.1 505 HTTP Version Not Supported\r\ncontent-type: text/plain\r\ncontent-length: \(body.utf8.count)\r\n"
            + "connection: close\r\n\r\n" + body
        outbound.append(contentsOf: response.utf8)
        environment.observer?.transportEvent(.connectionRefused(.protocolMismatch))
        environment.observer?.transportEvent(.handshakeRefused(.badPreface, .grpc))
        logger.debug("closing connection: an HTTP/1 request on the gRPC listener")
        closing = true
        refusedHTTP1 = true
    }

    /// Appends what HTTP/2 has to send now to `outbound` (once per loop turn, before writing).
    /// Nothing before the client's first bytes: an HTTP/1 client is answered in HTTP/1 instead.
    public func takeOutput() {
        guard sawInput, !refusedHTTP1 else { return }
        for event in http2.takeOutput(into: &outbound) { handle(event) }
    }

    private func handle(_ event: HTTP2Event) {
        switch event {
        case .request(let id, let headers, let endStream):
            openStream(id, headers: headers)
            if endStream { requestEnded(id) }
        case .data(let id, let bytes, let endStream):
            received(bytes, on: id)
            if endStream { requestEnded(id) }
        case .trailers(let id, _), .endStream(let id):
            requestEnded(id)
        case .streamReset(let id, _):
            cancel(id, reason: "the client reset the stream")
        case .streamClosed(let id, _):
            cancel(id, reason: "the stream closed before the call completed")
        case .goaway, .response:
            break // a server session never reports a response
        case .connectionError(let reason):
            if http2.refusedPreface { environment.observer?.transportEvent(.handshakeRefused(.badPreface, .grpc)) }
            logger.notice("closing connection: \(reason)")
            closing = true
        }
    }

    private func openStream(_ id: Int32, headers: HTTP2HeaderBlock) {
        sawRequest = true
        idleSince = nil
        let head: GRPCRequestHead
        do throws(GRPCRequestHead.Refusal) {
            head = try GRPCRequestHead.parse(headers, recent: &recentHead)
        } catch {
            switch error {
            case .http(let status, let message): refuseHTTP(id, status: status, message: message)
            case .grpc(let rpcError):
                let path = headers.first(named: ":path") ?? ""
                // An authorization header of another scheme than Bearer: a bad key, as on our listener.
                if rpcError.code == .unauthenticated {
                    refusedKey(logged: "request refused: \(rpcError.message)", path: path)
                }
                refuse(id, rpcError, path: path, app: "", requestID: "")
            }
            return
        }
        guard !draining else {
            refuse(id, .unavailable("the server is shutting down; the call was not run"), head: head, app: "")
            return
        }
        let app: String
        do throws(RPCError) {
            app = try authenticate(head)
        } catch {
            refuse(id, error, head: head, app: "")
            return
        }
        var method: RegisteredMethod?
        let bidirectional = bidirectionalPaths.first { $0.path == head.path }?.service
        if bidirectional == nil {
            do throws(RPCError) {
                method = try environment.admit(path: head.path, appID: app, now: now)
            } catch {
                refuse(id, error, head: head, app: app, methodIndex: environment.methods[head.path]?.index)
                return
            }
        }
        let deadline = head.timeoutNanoseconds.map { now &+ min($0, UInt64.max / 4) }
        streams[id] = Stream(
            head: head, app: app, method: method, bidirectional: bidirectional, deadline: deadline,
            responseEncoding: head.acceptedEncodings.first, startedAt: now)
        if let deadline, deadline < armedDeadline {
            armedDeadline = deadline
            deadlineToArm = ServerSession.TransportActions.DeadlineTimer(deadline: deadline, streamID: UInt32(id))
        }
    }

    /// The app `head`'s key belongs to; throws UNAUTHENTICATED for a missing or wrong one. A
    /// health check may come with no key at all (Kubernetes' gRPC probe and grpc_health_probe send
    /// none): it runs as no app.
    private func authenticate(_ head: GRPCRequestHead) throws(RPCError) -> String {
        if head.apiKey.isEmpty && head.path.hasPrefix(Self.healthPathPrefix) { return "" }
        guard !head.apiKey.isEmpty else {
            refusedKey(logged: "request refused: no API key", path: head.path)
            throw .unauthenticated(
                "the request carries no API key: send \"authorization: Bearer APP_ID:KEY\" (or x-api-key)")
        }
        if let lastKey, lastKey.apiKey == head.apiKey, lastKey.appID == head.appID { return lastKey.app }
        guard let app = environment.authenticator.authenticate(apiKey: head.apiKey, appID: head.appID) else {
            refusedKey(logged: "request refused: bad API key", path: head.path)
            throw .unauthenticated("the API key is not valid")
        }
        lastKey = (head.appID, head.apiKey, app)
        logger = environment.logger.with("peer", peer).with("listener", "grpc").with("app", app)
        return app
    }

    /// Counts a request refused for its key, as a HELLO with a wrong key is on our listener, and
    /// logs it unless its address has had its share of log lines.
    private func refusedKey(logged message: String, path: String) {
        let logged = environment.authenticationThrottle?.failed(address: peerAddress, now: now) ?? true
        environment.observer?.transportEvent(.authenticationFailed(.grpc, logged: logged))
        if logged { logger.notice(message, [("path", path)]) }
    }

    /// The standard health service's methods, which need no API key.
    static let healthPathPrefix = "/grpc.health.v1.Health/"

    private var peerAddress: String {
        guard let colon = peer.lastIndex(of: ":") else { return peer }
        return String(peer[..<colon])
    }

    private func received(_ bytes: [UInt8], on id: Int32) {
        guard let stream = streams[id], !stream.ended else { return }
        let messages: [GRPCMessageReader.Message]
        do throws(RPCError) {
            messages = try stream.reader.append(bytes, limit: limits.maxMessageBytes)
        } catch {
            fail(id, error)
            return
        }
        if stream.bidirectional == nil {
            for message in messages {
                guard stream.request == nil else {
                    fail(id, .invalidArgument("\(stream.head.path) takes one request message; the client sent more"))
                    return
                }
                stream.request = message
            }
        }
        settleBuffered(stream)
        if bufferedInput > maxBufferedInput || (stream.reserved > 0 && environment.memoryBudget.isUnderPressure) {
            fail(
                id,
                RPCError(
                    .overloaded,
                    "the connection holds more than \(maxBufferedInput) bytes of request messages for calls not yet started, or the server's memory budget is short; retry later"
                ))
            return
        }
        if let service = stream.bidirectional {
            for message in messages { answer(id, service: service, message: message) }
            return
        }
    }

    /// Keeps the budget's count and the connection's in step with the request bytes a stream
    /// holds: its incomplete message, and a whole one waiting for END_STREAM.
    private func settleBuffered(_ stream: Stream) {
        let now = stream.reader.pending.count + (stream.request?.bytes.count ?? 0)
        guard now != stream.reserved else { return }
        if now > stream.reserved {
            environment.memoryBudget.reserve(now - stream.reserved, for: .inbound)
        } else {
            environment.memoryBudget.release(stream.reserved - now, for: .inbound)
        }
        bufferedInput += now - stream.reserved
        stream.reserved = now
    }

    private func releaseBuffered(_ stream: Stream) {
        guard stream.reserved > 0 else { return }
        environment.memoryBudget.release(stream.reserved, for: .inbound)
        bufferedInput -= stream.reserved
    }

    /// The client half-closed: a unary or server-streaming call starts with its one message.
    private func requestEnded(_ id: Int32) {
        guard let stream = streams[id], !stream.ended, stream.call == nil else { return }
        guard stream.reader.pending.isEmpty else {
            fail(id, .protocolViolation("the request ended inside a message (its length prefix promised more)"))
            return
        }
        if stream.bidirectional != nil {
            finish(id, error: nil)
            return
        }
        guard let method = stream.method, let message = stream.request else {
            fail(id, .invalidArgument("\(stream.head.path) takes one request message; the client sent none"))
            return
        }
        var body = message.bytes
        if message.compressed {
            do throws(RPCError) {
                body = try inflate(message.bytes, encoding: stream.head.messageEncoding)
            } catch {
                fail(id, error)
                return
            }
        }
        stream.request = nil
        settleBuffered(stream)
        let head = stream.head
        let context = CallContext(
            method: head.path, streamID: UInt32(id), appID: stream.app, onBehalfOf: head.onBehalfOf,
            idempotencyKey: head.idempotencyKey, requestID: head.requestID, metadata: head.metadata,
            deadline: stream.deadline, peer: peer, receivedAt: environment.now())
        let call = ServerCall(
            context: context, acceptsDeflate: false, port: port, methodIndex: method.index,
            isInternal: method.isInternal, observer: environment.observer, clock: environment.now,
            memoryBudget: environment.memoryBudget)
        stream.call = call
        do throws(RPCError) {
            try body.withUnsafeBytes { raw in
                Result { () throws(RPCError) in try environment.start(method, body: raw, context: context, call: call) }
            }.get()
        } catch {
            if call.complete(error) { finish(id, error: error) }
        }
    }

    /// Inflates a compressed request message with the request's `grpc-encoding`.
    private func inflate(_ bytes: [UInt8], encoding: CompressionFormat?) throws(RPCError) -> [UInt8] {
        guard let encoding else {
            throw .protocolViolation("a message is flagged compressed but the request names no grpc-encoding")
        }
        var out: [UInt8] = []
        do throws(Inflater.Failure) {
            try GRPCCompression.inflater(encoding).inflateIndependent(
                bytes, limit: limits.maxMessageBytes, appendingTo: &out)
        } catch {
            switch error {
            case .tooLarge(let limit):
                throw .messageTooLarge("the request message inflates to more than \(limit) bytes")
            case .corrupt(let reason):
                throw .badEncoding("the request message is not valid \(encoding) data: \(reason)")
            }
        }
        return out
    }

    /// One message of a bidirectional method the session serves: one response message.
    private func answer(_ id: Int32, service: any GRPCBidirectionalService, message: GRPCMessageReader.Message) {
        guard let stream = streams[id], !stream.ended else { return }
        do throws(RPCError) {
            let body =
                message.compressed ? try inflate(message.bytes, encoding: stream.head.messageEncoding) : message.bytes
            sendMessage(id, stream, try service.respond(path: stream.head.path, to: body))
        } catch {
            fail(id, error)
        }
    }

    private func cancel(_ id: Int32, reason: String) {
        guard let stream = streams.removeValue(forKey: id) else { return }
        stream.ended = true
        releaseBuffered(stream)
        if let call = stream.call {
            _ = call.complete(.cancelled(reason))
            call.terminate(.cancelled)
        }
        streamGone()
    }

    // MARK: Output

    /// A frame of our protocol completed by a handler (from the call's port, on the loop).
    public func deliver(streamID: UInt32, frame: [UInt8], final: Bool) -> ServerSession.TransportActions {
        if let stream = streams[Int32(streamID)] {
            frame.withUnsafeBytes { translate(Int32(streamID), stream, frame: $0, final: final) }
        }
        return transportActions()
    }

    /// Frames the call's port queued, in order: each translated as `deliver(streamID:frame:final:)` does.
    public func deliver(_ frames: ArraySlice<OutgoingFrame>) -> ServerSession.TransportActions {
        for frame in frames {
            let (bytes, final) = frame.encoded
            guard let stream = streams[Int32(frame.streamID)] else { continue }
            bytes.withUnsafeBytes { translate(Int32(frame.streamID), stream, frame: $0, final: final) }
        }
        return transportActions()
    }

    /// Lets a handler completing on the loop write its frame into a scratch buffer, translated at
    /// once; nil when the call is no longer live.
    public func deliverInline(
        streamID: UInt32, final: Bool, _ write: (inout [UInt8]) -> Void
    ) -> ServerSession.TransportActions? {
        guard let stream = streams[Int32(streamID)], !stream.ended else { return nil }
        // The scratch buffer is taken while in use, so a delivery from inside this one (none is
        // expected) would only start a buffer of its own.
        var frame = inlineFrame
        inlineFrame = []
        frame.removeAll(keepingCapacity: true)
        write(&frame)
        frame.withUnsafeBytes { translate(Int32(streamID), stream, frame: $0, final: final) }
        inlineFrame = frame
        return transportActions()
    }

    /// One frame of our protocol for `stream` (looked up once by the caller: every step below
    /// works on it, not on the table).
    private func translate(_ id: Int32, _ stream: Stream, frame: UnsafeRawBufferPointer, final: Bool) {
        guard frame.count >= FrameHeader.size else { return }
        let (header, _) = FrameHeader.read(from: UnsafeRawBufferPointer(rebasing: frame[0..<FrameHeader.size]))
        let payload = UnsafeRawBufferPointer(rebasing: frame[FrameHeader.size...])
        switch header.type {
        case .reply:
            let statusLength = payload.count >= 4 ? Int(BigEndian.readUInt32(payload)) : -1
            guard statusLength >= 0, statusLength <= payload.count - 4 else {
                return finish(id, stream, error: .internal("the handler's reply is malformed"))
            }
            if statusLength == 0 {
                sendMessage(id, stream, UnsafeRawBufferPointer(rebasing: payload[4...]))
                finish(id, stream, error: nil)
            } else {
                let status =
                    (try? Status(serializedBytes: UnsafeRawBufferPointer(rebasing: payload[4..<4 + statusLength])))
                    ?? Status(code: StatusCode.internal.rawValue, message: "a reply whose status does not decode")
                finish(id, stream, error: RPCError(status: status))
            }
        case .message:
            sendMessage(id, stream, payload)
        case .trailers:
            let status = (try? Status(serializedBytes: payload)) ?? Status()
            finish(id, stream, error: status.code == 0 ? nil : RPCError(status: status))
        default:
            break
        }
        if final { finish(id, stream, error: nil) }
    }

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

    /// Sends one response message (headers first, once), compressed when the client accepts it
    /// and it is worth it; framed straight from the handler's bytes.
    private func sendMessage(_ id: Int32, _ stream: Stream, _ message: UnsafeRawBufferPointer) {
        guard !stream.ended else { return }
        do throws(HTTP2Error) {
            if !stream.headersSent {
                try http2.submitResponseHeaders(streamID: id, headers: Self.responseHeaders(stream.responseEncoding))
                stream.headersSent = true
            }
            if let encoding = stream.responseEncoding, message.count >= FrameWriter.compressionThreshold {
                var compressed: [UInt8] = []
                GRPCCompression.deflater(encoding).compressIndependent(message, appendingTo: &compressed)
                if compressed.count < message.count {
                    let framed = compressed.withUnsafeBytes { GRPCMessageReader.frame($0, compressed: true) }
                    try http2.sendData(streamID: id, bytes: framed)
                    return
                }
            }
            try http2.sendData(streamID: id, bytes: GRPCMessageReader.frame(message, compressed: false))
        } catch {
            // The stream is gone (reset by the client): nothing more to send on it.
            cancel(id, reason: "the stream closed before the call completed")
        }
    }

    private func sendMessage(_ id: Int32, _ stream: Stream, _ message: [UInt8]) {
        message.withUnsafeBytes { sendMessage(id, stream, $0) }
    }

    /// Ends a stream: trailers (or a trailers-only response when nothing was sent), and the
    /// stream's call, if any, leaves the session.
    private func finish(_ id: Int32, error: RPCError?) {
        guard let stream = streams[id] else { return }
        finish(id, stream, error: error)
    }

    private func finish(_ id: Int32, _ stream: Stream, error: RPCError?) {
        guard !stream.ended else { return }
        stream.ended = true
        do throws(HTTP2Error) {
            if stream.headersSent {
                try http2.submitTrailers(
                    streamID: id, headers: Self.statusBlock(error, path: stream.head.path, trailersOnly: false))
            } else {
                try http2.submitResponseHeaders(
                    streamID: id, headers: Self.statusBlock(error, path: stream.head.path, trailersOnly: true),
                    endStream: true)
            }
        } catch {
            // Gone already: the client reset it.
        }
        if stream.call == nil, stream.bidirectional != nil {
            // The session's own method: its end is its record.
            environment.observer?.callEnded(
                record(stream, id: id, methodIndex: nil, error: error, duration: now &- stream.startedAt))
        }
        releaseBuffered(stream)
        streams.removeValue(forKey: id)
        streamGone()
    }

    /// A call that failed before or while it was read (no handler ran): its end is recorded here.
    private func fail(_ id: Int32, _ error: RPCError) {
        guard let stream = streams[id], !stream.ended else { return }
        if let call = stream.call {
            if call.complete(error) { finish(id, error: error) }
            return
        }
        logger.debug("call refused", [("stream", String(id)), ("error", error.description)])
        environment.observer?.callEnded(
            record(stream, id: id, methodIndex: stream.method?.index, error: error, duration: 0))
        finish(id, error: error)
    }

    private func record(
        _ stream: Stream, id: Int32, methodIndex: Int?, error: RPCError?, duration: UInt64
    ) -> CallRecord {
        CallRecord(
            methodIndex: methodIndex, method: stream.head.path, appID: stream.app, onBehalfOf: stream.head.onBehalfOf,
            requestID: stream.head.requestID, peer: peer, streamID: UInt32(id), code: error?.code ?? .ok,
            errorCode: error?.errorCode ?? "", durationNanoseconds: duration)
    }

    /// A request refused from its head: a trailers-only response, recorded as a call.
    private func refuse(_ id: Int32, _ error: RPCError, head: GRPCRequestHead, app: String, methodIndex: Int? = nil) {
        refuse(
            id, error, path: head.path, app: app, requestID: head.requestID, onBehalfOf: head.onBehalfOf,
            methodIndex: methodIndex)
    }

    private func refuse(
        _ id: Int32, _ error: RPCError, path: String, app: String, requestID: String, onBehalfOf: String = "",
        methodIndex: Int? = nil
    ) {
        logger.debug("call refused", [("stream", String(id)), ("path", path), ("error", error.description)])
        try? http2.submitResponseHeaders(
            streamID: id, headers: Self.statusBlock(error, path: path, trailersOnly: true), endStream: true)
        environment.observer?.callEnded(
            CallRecord(
                methodIndex: methodIndex, method: path, appID: app, onBehalfOf: onBehalfOf, requestID: requestID,
                peer: peer, streamID: UInt32(id), code: error.code, errorCode: error.errorCode, durationNanoseconds: 0))
        streamGone()
    }

    /// Not gRPC at all (another method, another content type): an HTTP status and a text body.
    private func refuseHTTP(_ id: Int32, status: Int, message: String) {
        logger.debug("request refused", [("stream", String(id)), ("status", String(status)), ("reason", message)])
        try? http2.submitResponseHeaders(
            streamID: id,
            headers: [HTTP2Header(":status", String(status)), HTTP2Header("content-type", "text/plain")])
        try? http2.sendData(streamID: id, bytes: Array((message + "\n").utf8))
        try? http2.submitTrailers(streamID: id, headers: [])
        streamGone()
    }

    private func streamGone() {
        guard streams.isEmpty else { return }
        idleSince = environment.now()
        if draining { closing = true }
    }

    // MARK: Timers and shutdown

    /// The deadline timer fired: calls past their deadline end with DEADLINE_EXCEEDED (their
    /// handlers are told), and the timer is asked for the next deadline.
    public func expireDeadlines(now: UInt64) -> ServerSession.TransportActions {
        self.now = now
        armedDeadline = .max
        var next: (deadline: UInt64, id: Int32)?
        for (id, stream) in streams {
            guard let deadline = stream.deadline, !stream.ended else { continue }
            if deadline <= now {
                let error = RPCError.deadlineExceeded("the call's deadline passed")
                if let call = stream.call {
                    if call.complete(error) {
                        finish(id, error: error)
                        call.terminate(.deadlineExceeded)
                    }
                } else {
                    fail(id, error)
                }
            } else if deadline < next?.deadline ?? .max {
                next = (deadline, id)
            }
        }
        if let next {
            armedDeadline = next.deadline
            deadlineToArm = ServerSession.TransportActions.DeadlineTimer(
                deadline: next.deadline, streamID: UInt32(next.id))
        }
        return transportActions()
    }

    /// The once-a-second check: a connection that never sent a request within the handshake
    /// timeout, or has had no stream for the idle timeout, gets GOAWAY and closes.
    public func tick(now: UInt64) -> ServerSession.TransportActions {
        self.now = now
        if !sawRequest && now &- openedAt > UInt64(limits.handshakeTimeoutMs) * 1_000_000 {
            if !closing { environment.observer?.transportEvent(.handshakeRefused(.timeout, .grpc)) }
            logger.info("closing connection: no gRPC request within \(limits.handshakeTimeoutMs) ms")
            goawayAndClose()
        } else if limits.idleTimeoutMs > 0, let idleSince,
            now &- idleSince > UInt64(limits.idleTimeoutMs) * 1_000_000
        {
            logger.debug("closing idle connection")
            goawayAndClose()
        }
        return transportActions()
    }

    private func goawayAndClose() {
        try? http2.submitGoaway(errorCode: .noError)
        closing = true
    }

    /// Graceful shutdown: GOAWAY (new streams refused), streams told to end (a subscription ends
    /// with UNAVAILABLE and where to resume); the connection closes once every call has ended.
    public func beginDrain() -> ServerSession.TransportActions {
        guard !draining else { return transportActions() }
        draining = true
        try? http2.submitGoaway(errorCode: .noError)
        for stream in streams.values { stream.call?.terminate(.draining) }
        if streams.isEmpty { closing = true }
        return transportActions()
    }

    /// Ends every stream still open after the drain's grace period with UNAVAILABLE.
    public func forceEndStreams() -> ServerSession.TransportActions {
        let error = RPCError.unavailable("the server is shutting down")
        for (id, stream) in streams {
            if let call = stream.call {
                if call.complete(error) { finish(id, error: error) }
            } else {
                fail(id, error)
            }
        }
        closing = true
        return transportActions()
    }

    /// The connection is gone: its calls end (the first `ServerSession.callsEndedAtOnce` now, the
    /// rest through `endClosedCalls`), and what its streams held goes back to the budget.
    public func connectionClosed() {
        closing = true
        for stream in streams.values {
            releaseBuffered(stream)
            if let call = stream.call { callsToEnd.append(contentsOf: [call]) }
        }
        streams.removeAll()
        endClosedCalls(limit: ServerSession.callsEndedAtOnce)
    }

    /// A closed connection still has calls to end.
    public var hasCallsToEnd: Bool { !callsToEnd.isEmpty }

    /// Ends up to `limit` more of a closed connection's calls; returns how many it ended.
    @discardableResult
    public func endClosedCalls(limit: Int) -> Int { callsToEnd.end(limit: limit) }

    private func transportActions() -> ServerSession.TransportActions {
        defer { deadlineToArm = nil }
        return ServerSession.TransportActions(
            write: hasPendingOutput || !outbound.isEmpty, close: closeRequested, armDeadlineTimer: deadlineToArm)
    }
}

/// A bidirectional method the gRPC session serves itself (the method table holds unary and
/// server-streaming methods only): one response message per request message, the stream ended
/// with OK when the client half-closes. Server reflection is one.
public protocol GRPCBidirectionalService: Sendable {
    /// The method paths it answers.
    var paths: [String] { get }
    /// The encoded response to one encoded request message on `path`.
    func respond(path: String, to message: [UInt8]) throws(RPCError) -> [UInt8]
}
