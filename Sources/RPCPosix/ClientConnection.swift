internal import CSystemShims
internal import Glibc
public import ProtoBridge
public import RPCCore
public import RPCMessages
import Synchronization
import ThreadSupport

/// One client connection: many concurrent calls and streams over one socket.
///
/// Calls may be started from any thread. Stream ids are allocated and frames written under one
/// lock, so ids go out increasing; a reader thread matches replies to calls by stream id,
/// inflates compressed bodies and enforces deadlines (a call past its deadline fails with
/// DEADLINE_EXCEEDED and the server gets a CANCEL).
public final class ClientConnection: Sendable {
    /// What the server said in HELLO_ACK.
    public let helloAck: HelloAck
    public let options: ClientOptions
    private let fd: Int32
    private let writer = Mutex(WriterState())
    private let wakeFD: Int32
    private let state = Mutex<State>(State())
    private let reader: ReaderState

    /// Frames waiting for the socket, and the last stream id given out. Calls never block on the
    /// socket: what it does not take at once waits here and the reader thread writes it when the
    /// socket is writable again.
    private struct WriterState {
        var lastStreamID: UInt32 = 0
        var pending: [UInt8] = []
        var written = 0

        var hasPending: Bool { written < pending.count }
    }

    /// Unwritten bytes above which new calls fail at once (the server is not reading).
    static let pendingOutputLimit = 64 * 1024 * 1024

    private struct State {
        var calls: [UInt32: PendingCall] = [:]
        var closed: RPCError?
        var goawayLastStream: UInt32?
    }

    /// A raw stream message: the body after inflation and its size on the wire.
    public struct StreamMessage: Sendable {
        public let streamID: UInt32
        public let body: [UInt8]
        public let wireBytes: Int
        public let compressed: Bool
    }

    private enum PendingCall {
        case unary(deadline: UInt64?, completion: @Sendable (Result<[UInt8], RPCError>) -> Void)
        case stream(
            deadline: UInt64?, onMessage: @Sendable (StreamMessage) -> Void, onEnd: @Sendable (RPCError?) -> Void)

        var deadline: UInt64? {
            switch self {
            case .unary(let deadline, _), .stream(let deadline, _, _): deadline
            }
        }

        func fail(_ error: RPCError) {
            switch self {
            case .unary(_, let completion): completion(.failure(error))
            case .stream(_, _, let onEnd): onEnd(error)
            }
        }
    }

    // MARK: Connecting

    /// Connects, sends the preface and HELLO, and waits for HELLO_ACK.
    /// - Throws: UNAVAILABLE when the server cannot be reached; the server's GOAWAY error
    ///   (e.g. UNAUTHENTICATED) when it refuses the handshake.
    public static func connect(_ options: ClientOptions) throws(RPCError) -> ClientConnection {
        let fd = options.host.withCString { cshim_connect($0, options.port, Int32(options.connectTimeoutMs)) }
        guard fd >= 0 else {
            throw .unavailable("cannot connect to \(options.host):\(options.port): \(String(cString: strerror(-fd)))")
        }
        _ = cshim_set_nodelay(fd)
        do throws(RPCError) {
            var out = Preface.bytes
            FrameWriter.hello(
                Hello(
                    apiKey: options.apiKey, clientName: options.clientName,
                    acceptEncodings: options.acceptDeflate ? ["deflate"] : [], appID: options.appID), into: &out)
            try Self.sendAll(fd, out)
            var buffer: [UInt8] = []
            let deadline = monotonicNow() + UInt64(options.connectTimeoutMs) * 1_000_000
            while true {
                if let (header, payload) = try Self.nextFrame(&buffer, limit: options.maxMessageBytes + 64 * 1024) {
                    switch header.type {
                    case .helloAck:
                        let ack = try Self.decode(HelloAck.self, payload)
                        let connection = ClientConnection(fd: fd, options: options, helloAck: ack, leftover: buffer)
                        connection.startReader()
                        return connection
                    case .goaway:
                        let goaway = try Self.decode(Goaway.self, payload)
                        throw RPCError(status: goaway.status ?? RPCError.unavailable("the server went away").status)
                    default:
                        if header.type.isExtension { continue }
                        throw RPCError.protocolViolation("expected HELLO_ACK, got \(header.type)")
                    }
                }
                let now = monotonicNow()
                guard now < deadline else {
                    throw RPCError.unavailable("no HELLO_ACK within \(options.connectTimeoutMs) ms")
                }
                try Self.readSome(fd, into: &buffer, timeoutMs: Int32((deadline - now) / 1_000_000) + 1)
            }
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    private init(fd: Int32, options: ClientOptions, helloAck: HelloAck, leftover: [UInt8]) {
        self.fd = fd
        _ = cshim_set_nonblocking(fd, 1)
        wakeFD = cshim_eventfd()
        self.options = options
        self.helloAck = helloAck
        reader = ReaderState(buffer: leftover)
    }

    deinit {
        Glibc.close(fd)
        Glibc.close(wakeFD)
    }

    // MARK: Calls

    /// Starts a unary call with an encoded request body; `completion` gets the encoded response
    /// body or the call's error (on the reader thread, or at once if the call could not start).
    public func call(
        path: String, body: [UInt8], options: CallOptions = CallOptions(),
        completion: @escaping @Sendable (Result<[UInt8], RPCError>) -> Void
    ) {
        let deadline = options.timeoutMs > 0 ? monotonicNow() + UInt64(options.timeoutMs) * 1_000_000 : nil
        start(path: path, options: options, pending: .unary(deadline: deadline, completion: completion)) {
            streamID, header, out in
            body.withUnsafeBytes { FrameWriter.call(streamID: streamID, header: header, body: $0, into: &out) }
        }
    }

    /// Makes a unary call with an encoded request body and waits for the encoded response.
    public func call(path: String, body: [UInt8], options: CallOptions = CallOptions()) throws(RPCError) -> [UInt8] {
        let waiter = Waiter<Result<[UInt8], RPCError>>()
        call(path: path, body: body, options: options) { waiter.resolve($0) }
        return try waiter.wait().get()
    }

    /// Starts a unary call; `completion` runs on the reader thread.
    public func unary<Request, Response>(
        _ method: ProtoMethod<Request, Response>, _ request: Request, options: CallOptions = CallOptions(),
        completion: @escaping @Sendable (Result<Response, RPCError>) -> Void
    ) {
        let deadline = options.timeoutMs > 0 ? monotonicNow() + UInt64(options.timeoutMs) * 1_000_000 : nil
        let pending = PendingCall.unary(deadline: deadline) { result in
            completion(
                result.flatMap { body in
                    Result { () throws(RPCError) in try Self.decode(Response.self, body) }
                })
        }
        start(path: method.path, options: options, pending: pending) { streamID, header, out in
            FrameWriter.call(
                streamID: streamID, header: header, request: request, compress: options.compressRequest, into: &out)
        }
    }

    /// Makes a unary call and waits for its result.
    public func unary<Request, Response>(
        _ method: ProtoMethod<Request, Response>, _ request: Request, options: CallOptions = CallOptions()
    ) throws(RPCError) -> Response {
        let waiter = Waiter<Result<Response, RPCError>>()
        unary(method, request, options: options) { waiter.resolve($0) }
        return try waiter.wait().get()
    }

    /// Makes a unary call from async code.
    public func unary<Request, Response>(
        _ method: ProtoMethod<Request, Response>, _ request: Request, options: CallOptions = CallOptions()
    ) async throws(RPCError) -> Response {
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<Response, RPCError>, Never>) in
            unary(method, request, options: options) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// Starts a server stream with an encoded request body; `onMessage` gets each message (body
    /// inflated) and `onEnd` the final status (nil for OK), both on the reader thread.
    @discardableResult
    public func stream(
        path: String, body: [UInt8], options: CallOptions = CallOptions(),
        onMessage: @escaping @Sendable (StreamMessage) -> Void, onEnd: @escaping @Sendable (RPCError?) -> Void
    ) -> ClientStream {
        let deadline = options.timeoutMs > 0 ? monotonicNow() + UInt64(options.timeoutMs) * 1_000_000 : nil
        let streamID = start(
            path: path, options: options, pending: .stream(deadline: deadline, onMessage: onMessage, onEnd: onEnd)
        ) { streamID, header, out in
            body.withUnsafeBytes { FrameWriter.call(streamID: streamID, header: header, body: $0, into: &out) }
        }
        return ClientStream(connection: self, streamID: streamID)
    }

    /// Runs a server stream with an encoded request body to its end: `onMessage` gets each message
    /// as it arrives (on the reader thread); returns the final status (nil for OK).
    public func streamToEnd(
        path: String, body: [UInt8], options: CallOptions = CallOptions(),
        onMessage: @escaping @Sendable (StreamMessage) -> Void
    ) -> RPCError? {
        let waiter = Waiter<RPCError?>()
        stream(path: path, body: body, options: options, onMessage: onMessage) { waiter.resolve($0) }
        return waiter.wait()
    }

    /// Starts a server stream of typed messages. A message that does not decode ends the stream
    /// (client-side) with INVALID_ARGUMENT.
    @discardableResult
    public func serverStream<Request, Response>(
        _ method: ProtoMethod<Request, Response>, _ request: Request, options: CallOptions = CallOptions(),
        onMessage: @escaping @Sendable (Response) -> Void, onEnd: @escaping @Sendable (RPCError?) -> Void
    ) -> ClientStream {
        stream(
            path: method.path, body: request.serializedBytes(), options: options,
            onMessage: { [weak self] message in
                do throws(RPCError) {
                    onMessage(try Self.decode(Response.self, message.body))
                } catch {
                    self?.failStream(message.streamID, error)
                }
            }, onEnd: onEnd)
    }

    /// Cancels a call: the server is sent CANCEL and the call fails locally with CANCELLED.
    public func cancel(streamID: UInt32) {
        guard let pending = state.withLock({ $0.calls.removeValue(forKey: streamID) }) else { return }
        enqueue { FrameWriter.cancel(streamID: streamID, into: &$0) }
        pending.fail(.cancelled("the call was cancelled by the client"))
    }

    /// True while new calls can be started on this connection.
    public var isUsable: Bool { state.withLock { $0.closed == nil && $0.goawayLastStream == nil } }

    /// Calls in flight.
    public var pendingCallCount: Int { state.withLock { $0.calls.count } }

    /// Closes the connection; pending calls fail with UNAVAILABLE.
    public func close() {
        shutdown(fd, Int32(SHUT_RDWR))
    }

    @discardableResult
    private func start(
        path: String, options: CallOptions, pending: PendingCall,
        encode: (UInt32, CallHeader, inout [UInt8]) -> Void
    ) -> UInt32 {
        let header = CallHeader(
            method: path, timeoutMs: options.timeoutMs, onBehalfOf: options.onBehalfOf,
            idempotencyKey: options.idempotencyKey, requestID: options.requestID, metadata: options.metadata,
            acceptEncodings: options.acceptDeflate ? ["deflate"] : [])
        var refusal: RPCError?
        var wake = false
        let streamID: UInt32 = writer.withLock { writer in
            let streamID = writer.lastStreamID + 1
            let registered: RPCError? = state.withLock { state in
                if let closed = state.closed { return closed }
                if state.goawayLastStream != nil {
                    return .unavailable("the server sent GOAWAY; open a new connection")
                }
                state.calls[streamID] = pending
                return nil
            }
            if let registered {
                refusal = registered
                return 0
            }
            guard writer.pending.count - writer.written < Self.pendingOutputLimit else {
                _ = state.withLock { $0.calls.removeValue(forKey: streamID) }
                refusal = RPCError(
                    code: .resourceExhausted, errorCode: RuntimeErrorCode.resourceExhausted,
                    message: "more than \(Self.pendingOutputLimit) bytes wait to be sent: the server is not reading")
                return 0
            }
            writer.lastStreamID = streamID
            encode(streamID, header, &writer.pending)
            wake = !flush(&writer)
            return streamID
        }
        if wake { _ = cshim_eventfd_signal(wakeFD) }
        if let refusal { pending.fail(refusal) }
        return streamID
    }

    /// Appends a frame to the output and writes what the socket takes now.
    private func enqueue(_ encode: (inout [UInt8]) -> Void) {
        let wake = writer.withLock { writer in
            encode(&writer.pending)
            return !flush(&writer)
        }
        if wake { _ = cshim_eventfd_signal(wakeFD) }
    }

    /// Writes pending output until the socket would block; true when nothing is left.
    private func flush(_ writer: inout WriterState) -> Bool {
        while writer.written < writer.pending.count {
            let n = writer.pending.withUnsafeBytes { bytes in
                send(fd, bytes.baseAddress! + writer.written, bytes.count - writer.written, Int32(MSG_NOSIGNAL))
            }
            if n > 0 {
                writer.written += n
            } else if n < 0 && errno == EINTR {
                continue
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                return false
            } else {
                // The connection is broken; the reader sees it and fails every call.
                writer.pending.removeAll()
                writer.written = 0
                return true
            }
        }
        writer.pending.removeAll(keepingCapacity: writer.pending.capacity <= 1024 * 1024)
        writer.written = 0
        return true
    }

    // MARK: Reading

    private func startReader() {
        // Nobody joins the reader (it ends on its own when the connection closes): detached, it
        // gives its stack back, instead of keeping it mapped for every connection ever opened.
        WorkerThread.detached(name: "mrpc-client") { [self] in
            readLoop()
        }
    }

    private func readLoop() {
        var buffer = reader.takeBuffer()
        let frameLimit = options.maxMessageBytes + 64 * 1024
        var failure: RPCError?
        outer: while true {
            do throws(RPCError) {
                while let (header, payload) = try Self.nextFrame(&buffer, limit: frameLimit) {
                    handle(header, payload)
                }
            } catch {
                failure = error
                break outer
            }
            let timeout = expireDeadlines()
            do throws(RPCError) {
                try waitAndRead(into: &buffer, timeoutMs: timeout)
            } catch {
                failure = error
                break outer
            }
        }
        let error = failure ?? .unavailable("the connection closed")
        let pending = state.withLock { state -> [PendingCall] in
            state.closed = error
            defer { state.calls.removeAll() }
            return Array(state.calls.values)
        }
        for call in pending { call.fail(error) }
    }

    /// Waits for the socket (readable, or writable while output waits) or a wake-up; writes what
    /// waits and appends what arrived.
    private func waitAndRead(into buffer: inout [UInt8], timeoutMs: Int32) throws(RPCError) {
        let wantsOutput = writer.withLock { $0.hasPending }
        var fds = [
            pollfd(fd: fd, events: Int16(POLLIN) | (wantsOutput ? Int16(POLLOUT) : 0), revents: 0),
            pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
        ]
        let ready = poll(&fds, 2, timeoutMs)
        if ready < 0 && errno == EINTR { return }
        guard ready > 0 else { return }
        if fds[1].revents != 0 { _ = cshim_eventfd_drain(wakeFD) }
        if fds[0].revents & Int16(POLLOUT) != 0 { _ = writer.withLock { flush(&$0) } }
        guard fds[0].revents & (Int16(POLLIN) | Int16(POLLHUP) | Int16(POLLERR)) != 0 else { return }
        while true {
            let start = buffer.count
            buffer.appendZeros(64 * 1024)
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + start, 64 * 1024) }
            buffer.removeLast(64 * 1024 - max(n, 0))
            if n == 0 { throw .unavailable("the server closed the connection") }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { return }
                throw .unavailable("cannot read from the server: \(String(cString: strerror(errno)))")
            }
            if n < 64 * 1024 { return }
        }
    }

    /// Fails calls past their deadline; returns the poll timeout until the next one (ms).
    private func expireDeadlines() -> Int32 {
        // Inflaters of streams that ended elsewhere (cancelled, failed) go too.
        if reader.hasInflaters {
            let live = state.withLock { Set($0.calls.keys) }
            reader.dropInflaters { !live.contains($0) }
        }
        let now = monotonicNow()
        var next: UInt64 = .max
        let expired: [(UInt32, PendingCall)] = state.withLock { state in
            var expired: [(UInt32, PendingCall)] = []
            for (id, call) in state.calls {
                guard let deadline = call.deadline else { continue }
                if deadline <= now { expired.append((id, call)) } else { next = min(next, deadline) }
            }
            for (id, _) in expired { state.calls.removeValue(forKey: id) }
            return expired
        }
        for (id, call) in expired {
            enqueue { FrameWriter.cancel(streamID: id, into: &$0) }
            call.fail(.deadlineExceeded("the call's deadline passed (client side)"))
        }
        return next == .max ? 1_000 : Int32(min(1_000, (next - now) / 1_000_000 + 1))
    }

    private func handle(_ header: FrameHeader, _ payload: [UInt8]) {
        switch header.type {
        case .reply:
            guard let call = state.withLock({ $0.calls.removeValue(forKey: header.streamID) }) else { return }
            switch call {
            case .unary(_, let completion):
                completion(parseReply(header, payload))
            case .stream(_, _, let onEnd):
                // A streaming call the server refused before running it (unknown method, bad
                // request, too many calls) gets one REPLY with the error instead of TRAILERS.
                reader.dropInflater(for: header.streamID)
                switch parseReply(header, payload) {
                case .failure(let error): onEnd(error)
                case .success: onEnd(.protocolViolation("the server answered a streaming call with an OK REPLY"))
                }
            }
        case .message:
            guard let call = state.withLock({ $0.calls[header.streamID] }),
                case .stream(_, let onMessage, _) = call
            else { return }
            if header.isCompressed {
                var body: [UInt8] = []
                do throws(RawInflater.Failure) {
                    try reader.inflater(for: header.streamID).inflateStreamMessage(
                        payload, limit: options.maxMessageBytes, appendingTo: &body)
                } catch {
                    failStream(
                        header.streamID,
                        RPCError.badEncoding("a compressed stream message does not inflate: \(error)").caused(by: error)
                    )
                    return
                }
                onMessage(
                    StreamMessage(streamID: header.streamID, body: body, wireBytes: payload.count, compressed: true))
            } else {
                guard payload.count <= options.maxMessageBytes else {
                    failStream(header.streamID, tooLarge(payload.count))
                    return
                }
                onMessage(
                    StreamMessage(streamID: header.streamID, body: payload, wireBytes: payload.count, compressed: false)
                )
            }
        case .trailers:
            reader.dropInflater(for: header.streamID)
            guard let call = state.withLock({ $0.calls.removeValue(forKey: header.streamID) }),
                case .stream(_, _, let onEnd) = call
            else { return }
            do throws(RPCError) {
                let status = try Self.decode(Status.self, payload)
                onEnd(status.code == 0 ? nil : RPCError(status: status))
            } catch {
                onEnd(error)
            }
        case .ping:
            enqueue { out in payload.withUnsafeBytes { FrameWriter.ping(.pong, payload: $0, into: &out) } }
        case .goaway:
            let goaway = (try? Self.decode(Goaway.self, payload)) ?? Goaway()
            let error = RPCError(status: goaway.status ?? RPCError.unavailable("the server went away").status)
            let refused: [PendingCall] = state.withLock { state in
                state.goawayLastStream = goaway.lastStreamID
                let ids = state.calls.keys.filter { $0 > goaway.lastStreamID }
                return ids.compactMap { state.calls.removeValue(forKey: $0) }
            }
            let notRun = RPCError.unavailable(
                "the server went away before running the call (\(error.message)); it may be retried"
            )
            .caused(by: error)
            for call in refused { call.fail(notRun) }
        default:
            break
        }
    }

    private func failStream(_ streamID: UInt32, _ error: RPCError) {
        guard let call = state.withLock({ $0.calls.removeValue(forKey: streamID) }) else { return }
        enqueue { FrameWriter.cancel(streamID: streamID, into: &$0) }
        call.fail(error)
    }

    private func parseReply(_ header: FrameHeader, _ payload: [UInt8]) -> Result<[UInt8], RPCError> {
        guard payload.count >= 4 else { return .failure(.protocolViolation("REPLY shorter than its status length")) }
        let statusLength = payload.withUnsafeBytes { Int(BigEndian.readUInt32($0)) }
        guard statusLength <= payload.count - 4 else {
            return .failure(.protocolViolation("REPLY status length beyond the frame"))
        }
        if statusLength > 0 {
            do throws(RPCError) {
                let status = try Self.decode(Status.self, Array(payload[4..<4 + statusLength]))
                if status.code != 0 { return .failure(RPCError(status: status)) }
            } catch {
                return .failure(error)
            }
        }
        let body = Array(payload[(4 + statusLength)...])
        guard header.isCompressed else {
            return body.count <= options.maxMessageBytes ? .success(body) : .failure(tooLarge(body.count))
        }
        var inflated: [UInt8] = []
        do throws(RawInflater.Failure) {
            try reader.unaryInflater.inflateIndependent(body, limit: options.maxMessageBytes, appendingTo: &inflated)
        } catch {
            return .failure(RPCError.badEncoding("the compressed reply does not inflate: \(error)").caused(by: error))
        }
        return .success(inflated)
    }

    /// The error for an uncompressed body over `maxMessageBytes` (compressed ones are capped
    /// while they inflate).
    private func tooLarge(_ count: Int) -> RPCError {
        .messageTooLarge(
            "the server sent a body of \(count) bytes; this client accepts at most \(options.maxMessageBytes) (maxMessageBytes)"
        )
    }

    // MARK: Socket helpers

    static func decode<M: ProtoMessage>(_ type: M.Type, _ bytes: [UInt8]) throws(RPCError) -> M {
        do {
            return try M(serializedBytes: bytes)
        } catch {
            throw RPCError.invalidArgument("the server sent an \(error.description)").caused(by: error)
        }
    }

    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) throws(RPCError) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                sent += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                throw .unavailable("cannot write to the server: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Waits up to `timeoutMs` for data and appends what arrives.
    static func readSome(_ fd: Int32, into buffer: inout [UInt8], timeoutMs: Int32) throws(RPCError) {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, timeoutMs)
        if ready < 0 && errno == EINTR { return }
        guard ready > 0 else { return }
        let start = buffer.count
        buffer.appendZeros(64 * 1024)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + start, 64 * 1024) }
        buffer.removeLast(64 * 1024 - max(n, 0))
        if n == 0 { throw .unavailable("the server closed the connection") }
        if n < 0 && errno != EINTR && errno != EAGAIN {
            throw .unavailable("cannot read from the server: \(String(cString: strerror(errno)))")
        }
    }

    /// Removes and returns the first complete frame of `buffer`, if there is one.
    static func nextFrame(_ buffer: inout [UInt8], limit: Int) throws(RPCError) -> (FrameHeader, [UInt8])? {
        guard buffer.count >= FrameHeader.size else { return nil }
        let header = buffer.withUnsafeBytes { FrameHeader.read(from: $0).header }
        guard Int(header.length) <= limit else {
            throw .messageTooLarge("the server sent a frame of \(header.length) bytes (limit \(limit))")
        }
        let total = FrameHeader.size + Int(header.length)
        guard buffer.count >= total else { return nil }
        let payload = Array(buffer[FrameHeader.size..<total])
        buffer.removeFirst(total)
        return (header, payload)
    }
}

/// A server stream started on a `ClientConnection`.
public final class ClientStream: Sendable {
    public let streamID: UInt32
    private weak let connection: ClientConnection?

    init(connection: ClientConnection, streamID: UInt32) {
        self.connection = connection
        self.streamID = streamID
    }

    /// Cancels the stream: CANCEL is sent and `onEnd` gets CANCELLED.
    public func cancel() {
        connection?.cancel(streamID: streamID)
    }
}

/// State only the reader thread touches.
private final class ReaderState: @unchecked Sendable {
    // Invariant: used only on the connection's reader thread (after `takeBuffer`).
    private var initial: [UInt8]
    private var inflaters: [UInt32: RawInflater] = [:]
    let unaryInflater = RawInflater()

    init(buffer: [UInt8]) { initial = buffer }

    func takeBuffer() -> [UInt8] {
        defer { initial = [] }
        return initial
    }

    func inflater(for streamID: UInt32) -> RawInflater {
        if let existing = inflaters[streamID] { return existing }
        let inflater = RawInflater()
        inflaters[streamID] = inflater
        return inflater
    }

    func dropInflater(for streamID: UInt32) { inflaters[streamID] = nil }

    var hasInflaters: Bool { !inflaters.isEmpty }

    func dropInflaters(where ended: (UInt32) -> Bool) {
        for id in inflaters.keys where ended(id) { inflaters[id] = nil }
    }
}

/// A one-shot value a thread can wait for.
final class Waiter<Value: Sendable>: Sendable {
    private let value = ConditionLock<Value?>(nil)

    func resolve(_ value: Value) {
        self.value.withLock { if $0 == nil { $0 = value } }
        self.value.broadcast()
    }

    func wait() -> Value {
        value.withLock(when: { $0 != nil }) { $0! }
    }
}
