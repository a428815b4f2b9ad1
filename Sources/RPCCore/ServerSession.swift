import ProtoBridge
import RPCMessages

/// The protocol state of one server connection: preface, handshake, calls, streams, drain.
///
/// The session knows frames and calls, not sockets: the transport feeds it events (bytes
/// received, completions, timers, shutdown) and carries out the `TransportActions` each returns
/// — write what the session left in `outbound`, arm the deadline timer, close — so every protocol
/// rule can be tested without a socket. Where the connection is in its life (handshake, open,
/// draining, closing) is one value, the `StateMachine`; the session adds the calls in flight and
/// the frames. It is confined to its connection's event loop; completions from other threads
/// reach it through the `CallPort`, which brings them back to the loop.
public final class ServerSession {
    /// What a session needs from the server it belongs to.
    public struct Environment: Sendable {
        public var serverName: String
        public var serverVersion: String
        /// HELLO_ACK's `schema_digest`: "sha256:HEX" of the descriptor set reflection serves,
        /// so that a tool holding it from before need not fetch it again; empty for none.
        public var schemaDigest = ""
        public var limits: ServerLimits
        public var methods: MethodTable
        public var authenticator: any Authenticator
        public var logger: Logger
        /// Runs blocking work on a worker thread.
        public var offload: @Sendable (@escaping @Sendable () -> Void) -> Void
        /// Runs the work of a request too large for the loop (a compressed body that inflates past
        /// `ServerLimits.inlineInflateBytes`): inflating, decoding and starting its handler. A pool
        /// of its own, so such requests never hold the workers every storage read waits for.
        public var offloadLargeRequest: @Sendable (@escaping @Sendable () -> Void) -> Void
        /// Runs work on the calling event loop once it has read its turn's input from every
        /// connection (at once off a loop); nil: at once. For handlers registered with
        /// `afterTurnInput` (`MethodTable.addUnary`).
        public var afterTurnInput: (@Sendable (@escaping @Sendable () -> Void) -> Void)?
        /// The monotonic clock, in nanoseconds.
        public var now: @Sendable () -> UInt64
        /// Told of every call's end (metrics, access log); nil for none.
        public var observer: (any CallObserver)?
        /// Refuses calls over an app's request rate; nil for no limit.
        public var rateLimiter: (any RateLimiter)?
        /// What clients make the server hold, counted against the operator's limit; shared by
        /// every connection of the server. Past its limit, new calls are refused (ERR_OVERLOADED).
        public var memoryBudget: MemoryBudget
        /// Open connections per app against the per-app cap, checked at HELLO; nil for no cap.
        public var appConnections: AppConnections?
        /// Keeps a flood of wrong API keys out of the log (one summary instead of a line each);
        /// nil logs every failure.
        public var authenticationThrottle: AuthenticationThrottle?

        public init(
            serverName: String, serverVersion: String, limits: ServerLimits, methods: MethodTable,
            authenticator: any Authenticator, logger: Logger,
            offload: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
            now: @escaping @Sendable () -> UInt64, observer: (any CallObserver)? = nil,
            rateLimiter: (any RateLimiter)? = nil, memoryBudget: MemoryBudget = .unlimited(),
            appConnections: AppConnections? = nil, authenticationThrottle: AuthenticationThrottle? = nil,
            offloadLargeRequest: (@Sendable (@escaping @Sendable () -> Void) -> Void)? = nil
        ) {
            self.serverName = serverName
            self.serverVersion = serverVersion
            self.limits = limits
            self.methods = methods
            self.authenticator = authenticator
            self.logger = logger
            self.offload = offload
            self.offloadLargeRequest = offloadLargeRequest ?? offload
            self.now = now
            self.observer = observer
            self.rateLimiter = rateLimiter
            self.memoryBudget = memoryBudget
            self.appConnections = appConnections
            self.authenticationThrottle = authenticationThrottle
        }
    }

    private struct LiveCall {
        let call: ServerCall
        let isStream: Bool
        var deadline: UInt64? = nil
    }

    /// Bytes to write to the peer, in order; the transport removes what it has written.
    public var outbound: [UInt8] = []
    /// True once the connection should close after `outbound` is written (or has closed).
    public var closeRequested: Bool { machine.closeRequested }
    /// The deadline the transport's one deadline timer is armed for (`.max`: none asked for).
    /// A call with an earlier deadline asks for the timer to move there; calls with later ones
    /// need nothing until it fires, and `expireDeadlines(now:)` then asks for the next.
    private var armedDeadline: UInt64 = .max
    /// A move of the deadline timer asked for during the current event, returned with its actions.
    private var deadlineToArm: TransportActions.DeadlineTimer?

    private let environment: Environment
    private let limits: ServerLimits
    private let methods: MethodTable
    private let port: any CallPort
    private var logger: Logger
    private var machine: StateMachine
    private var calls = StreamIDMap<LiveCall>()
    /// Calls of the closed connection not yet ended (`endClosedCalls`).
    private var callsToEnd = CallsToEnd()
    private var lastStreamID: UInt32 = 0
    private var acceptsDeflate = false
    private var appID = ""
    /// True once the app's connection count includes this connection (released when it closes).
    private var countedInApp = false
    /// The monotonic time of the current batch of frames (read once per `receive`).
    private var now: UInt64 = 0
    /// A request of this connection is being taken in on the large-request pool: no further
    /// frame is consumed until it has been (`largeRequestTakenIn`), so one connection has at most
    /// one such request, and its inflated body, off the loop at a time.
    public private(set) var awaitsLargeRequest = false

    public init(environment: Environment, port: any CallPort, peer: String) {
        self.environment = environment
        limits = environment.limits
        methods = environment.methods
        self.port = port
        logger = environment.logger.with("peer", peer)
        machine = StateMachine(openedAt: environment.now(), limits: environment.limits)
        self.peer = peer
    }

    /// The peer's address.
    public let peer: String

    /// The peer's address without its port: what failed handshakes are counted by.
    private var peerAddress: String {
        guard let colon = peer.lastIndex(of: ":") else { return peer }
        return String(peer[..<colon])
    }

    /// The app the connection authenticated as (empty before HELLO).
    public var authenticatedApp: String { appID }

    /// Calls and streams in flight.
    public var liveCallCount: Int { calls.count }

    /// Consumes every complete frame at the start of `bytes`, stopping early once `outbound`
    /// holds more than `outboundLimit` bytes: the transport's backpressure, checked before each
    /// frame, so a peer that pipelines calls with large replies cannot make one batch of input
    /// hold more than the limit and one reply. The bytes not consumed then stay with the
    /// transport until it feeds them again. It also stops after `frameLimit` frames, so that the
    /// transport can share its thread out among connections, and while a large request of the
    /// connection is taken in off the loop (`awaitsLargeRequest`).
    /// - Returns: the bytes consumed; how many bytes the next frame needs in all (header and
    ///   payload) when known (0 when unknown, or when the session stopped early), so the
    ///   transport can make room for it; and what the transport does.
    public func receive(
        _ bytes: UnsafeRawBufferPointer, outboundLimit: Int = .max, frameLimit: Int = .max
    ) -> (consumed: Int, needed: Int, actions: TransportActions) {
        let (consumed, needed) = consume(bytes, outboundLimit: outboundLimit, frameLimit: frameLimit)
        return (consumed, needed, transportActions())
    }

    private func consume(
        _ bytes: UnsafeRawBufferPointer, outboundLimit: Int, frameLimit: Int
    ) -> (consumed: Int, needed: Int) {
        var offset = 0
        var frames = 0
        now = environment.now()
        if case .awaitingPreface = machine.state {
            guard bytes.count >= Preface.size else { return (0, Preface.size) }
            if let problem = Preface.problem(in: UnsafeRawBufferPointer(rebasing: bytes[0..<Preface.size])) {
                environment.observer?.transportEvent(.handshakeRefused(.badPreface, .mrpc))
                fail(.protocolViolation(problem))
                return (bytes.count, 0)
            }
            offset = Preface.size
            machine.prefaceReceived()
        }
        while machine.isReading {
            guard outbound.count <= outboundLimit && frames < frameLimit && !awaitsLargeRequest else {
                // Held back, not late: the frame timeout does not run for what the server holds.
                machine.inputLeft(incomplete: false, at: now)
                return (offset, 0)
            }
            let available = bytes.count - offset
            guard available >= FrameHeader.size else {
                machine.inputLeft(incomplete: available > 0, at: now)
                return (offset, FrameHeader.size)
            }
            let (header, reserved) = FrameHeader.read(
                from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + FrameHeader.size]))
            if case .awaitingHello = machine.state, let problem = handshakeProblem(header) {
                // Refused from the header alone: an unauthenticated peer never makes the server
                // wait for (and buffer) a large payload.
                environment.observer?.transportEvent(.handshakeRefused(.badHello, .mrpc))
                fail(problem)
                return (bytes.count, 0)
            }
            guard Int(header.length) <= limits.maxFramePayload else {
                fail(
                    .messageTooLarge(
                        "frame of \(header.length) bytes exceeds the limit of \(limits.maxFramePayload) bytes"))
                return (bytes.count, 0)
            }
            let total = FrameHeader.size + Int(header.length)
            guard available >= total else {
                machine.inputLeft(incomplete: true, at: now)
                return (offset, total)
            }
            let payload = UnsafeRawBufferPointer(rebasing: bytes[offset + FrameHeader.size..<offset + total])
            offset += total
            frames += 1
            machine.frameReceived(at: now)
            // An extension frame is ignored whole: its flags and reserved bits are the extension's.
            if header.type.isExtension { continue }
            if reserved != 0 || header.flags & ~FrameHeader.compressedFlag != 0 {
                fail(.protocolViolation("frame \(header.type) on stream \(header.streamID) has non-zero reserved bits"))
                break
            }
            handle(header, payload)
        }
        return (machine.isReading ? offset : bytes.count, 0)
    }

    /// Before HELLO, what is wrong with a frame from its header alone: more than
    /// `maxHelloBytes` of payload (whatever its type), a type other than HELLO, or HELLO off
    /// stream 0. Extension frames may come first, within the same size.
    private func handshakeProblem(_ header: FrameHeader) -> RPCError? {
        guard Int(header.length) <= limits.maxHelloBytes else {
            let what = header.type == .hello ? "HELLO" : "a frame before HELLO (\(header.type))"
            return .messageTooLarge(
                "\(what) of \(header.length) bytes exceeds the limit of \(limits.maxHelloBytes) bytes")
        }
        guard !header.type.isExtension else { return nil }
        guard header.type.isKnown else { return .protocolViolation("unknown frame type \(header.type)") }
        guard header.type == .hello, header.streamID == 0 else {
            return .protocolViolation(
                "the first frame must be HELLO on stream 0, got \(header.type) on stream \(header.streamID)")
        }
        return nil
    }

    // MARK: Frames

    private func handle(_ header: FrameHeader, _ payload: UnsafeRawBufferPointer) {
        guard header.type.isKnown else {
            fail(.protocolViolation("unknown frame type \(header.type)"))
            return
        }
        if case .awaitingHello = machine.state {
            // `handshakeProblem` has checked it is HELLO on stream 0.
            handleHello(header, payload)
            return
        }
        if header.isCompressed && header.type != .call {
            fail(.protocolViolation("frame \(header.type) cannot be compressed"))
            return
        }
        switch header.type {
        case .call:
            handleCall(header, payload)
        case .cancel:
            handleCancel(streamID: header.streamID)
        case .ping:
            guard header.streamID == 0, payload.count == 8 else {
                fail(.protocolViolation("PING must carry 8 bytes on stream 0"))
                return
            }
            FrameWriter.ping(.pong, payload: payload, into: &outbound)
        case .pong:
            break
        default:
            fail(.protocolViolation("a client cannot send \(header.type)"))
        }
    }

    private func handleHello(_ header: FrameHeader, _ payload: UnsafeRawBufferPointer) {
        let hello: Hello
        do {
            hello = try Hello(serializedBytes: payload)
        } catch {
            environment.observer?.transportEvent(.handshakeRefused(.badHello, .mrpc))
            fail(.invalidArgument(error.description))
            return
        }
        guard let app = environment.authenticator.authenticate(apiKey: hello.apiKey, appID: hello.appID) else {
            // A correct key never gets here, so the throttle never slows one down.
            let logged = handshakeFailureLogged()
            environment.observer?.transportEvent(.authenticationFailed(.mrpc, logged: logged))
            if logged { logger.notice("handshake refused: bad API key", [("client", hello.clientName)]) }
            fail(.unauthenticated(hello.apiKey.isEmpty ? "the HELLO carries no API key" : "the API key is not valid"))
            return
        }
        if let appConnections = environment.appConnections {
            guard appConnections.open(app: app) else {
                environment.observer?.transportEvent(.connectionRefused(.appFull))
                logger.debug("handshake refused: the app has its maximum of connections", [("app", app)])
                fail(
                    RPCError(
                        .tooManyConnections,
                        "app \(app) already has its maximum of \(appConnections.limit) connections",
                        details: ["app_id": app, "limit": String(appConnections.limit)]))
                return
            }
            countedInApp = true
        }
        appID = app
        acceptsDeflate = hello.acceptEncodings.contains("deflate")
        machine.helloAccepted(at: now)
        logger = logger.with("app", app)
        logger.debug("connection authenticated", [("client", hello.clientName)])
        let limits = environment.limits
        FrameWriter.helloAck(
            HelloAck(
                serverName: environment.serverName, serverVersion: environment.serverVersion, protocolVersion: 1,
                maxMessageBytes: UInt32(limits.maxMessageBytes), maxCallHeaderBytes: UInt32(limits.maxCallHeaderBytes),
                maxConcurrentCalls: UInt32(limits.maxConcurrentCalls),
                acceptEncodings: acceptsDeflate ? ["deflate"] : [], appID: app,
                idleTimeoutMs: UInt32(limits.idleTimeoutMs), schemaDigest: environment.schemaDigest), into: &outbound)
    }

    private func handleCall(_ header: FrameHeader, _ payload: UnsafeRawBufferPointer) {
        let streamID = header.streamID
        guard streamID != 0 else {
            fail(.protocolViolation("CALL on stream 0"))
            return
        }
        guard streamID > lastStreamID else {
            let reason =
                calls.contains(streamID)
                ? "stream id \(streamID) is already in use"
                : "stream id \(streamID) is not greater than the previous one (\(lastStreamID))"
            fail(.protocolViolation(reason))
            return
        }
        guard payload.count >= 4 else {
            fail(.protocolViolation("CALL on stream \(streamID) is shorter than its header length"))
            return
        }
        let headerLength = Int(BigEndian.readUInt32(payload))
        guard headerLength <= payload.count - 4 else {
            fail(
                .protocolViolation(
                    "CALL on stream \(streamID) declares a header of \(headerLength) bytes but carries \(payload.count - 4)"
                ))
            return
        }
        lastStreamID = streamID
        guard headerLength <= limits.maxCallHeaderBytes else {
            reject(
                streamID,
                .messageTooLarge(
                    "call header of \(headerLength) bytes exceeds the limit of \(limits.maxCallHeaderBytes)"))
            return
        }
        let callHeader: CallHeader
        do {
            callHeader = try CallHeader(
                serializedBytes: UnsafeRawBufferPointer(rebasing: payload[4..<4 + headerLength]))
        } catch {
            reject(streamID, .invalidArgument(error.description))
            return
        }
        guard !machine.isDraining else {
            reject(streamID, .unavailable("the server is shutting down; the call was not run"), header: callHeader)
            return
        }
        guard calls.count < limits.maxConcurrentCalls else {
            reject(streamID, .tooManyCalls(limit: limits.maxConcurrentCalls), header: callHeader)
            return
        }
        let method: RegisteredMethod
        do throws(RPCError) {
            method = try environment.admit(path: callHeader.method, appID: appID, now: now)
        } catch {
            reject(streamID, error, header: callHeader, methodIndex: methods[callHeader.method]?.index)
            return
        }
        let rawBody = UnsafeRawBufferPointer(rebasing: payload[(4 + headerLength)...])
        var inflated: [UInt8] = []
        var isLarge = false
        if header.isCompressed {
            // Inflated here up to the inline limit; a body that inflates past it is taken in on
            // the large-request pool instead (inflating 4 MiB and decoding and answering it held
            // a loop, and every connection on it, for tens of milliseconds).
            let inlineLimit = min(limits.maxMessageBytes, limits.inlineInflateBytes)
            do throws(Inflater.Failure) {
                try CompressionScratch.inflater.value.inflateIndependent(
                    rawBody, limit: inlineLimit, appendingTo: &inflated)
            } catch .tooLarge where inlineLimit < limits.maxMessageBytes {
                isLarge = true
            } catch {
                reject(streamID, Self.inflateError(error), header: callHeader, methodIndex: method.index)
                return
            }
        } else if rawBody.count > limits.maxMessageBytes {
            reject(
                streamID,
                .messageTooLarge(
                    "the request body of \(rawBody.count) bytes exceeds the limit of \(limits.maxMessageBytes)"),
                header: callHeader, methodIndex: method.index)
            return
        }
        let deadline: UInt64? = callHeader.timeoutMs > 0 ? now + UInt64(callHeader.timeoutMs) * 1_000_000 : nil
        let context = CallContext(
            method: callHeader.method, streamID: streamID, appID: appID, onBehalfOf: callHeader.onBehalfOf,
            idempotencyKey: callHeader.idempotencyKey, requestID: callHeader.requestID, metadata: callHeader.metadata,
            deadline: deadline, peer: peer, receivedAt: now)
        let call = ServerCall(
            context: context, acceptsDeflate: acceptsDeflate && callHeader.acceptEncodings.contains("deflate"),
            port: port,
            methodIndex: method.index, isInternal: method.isInternal, observer: environment.observer,
            clock: environment.now,
            memoryBudget: environment.memoryBudget)
        let isStream = method.description.serverStreaming
        // Registered before the handler runs: an inline handler may complete it at once.
        calls[streamID] = LiveCall(call: call, isStream: isStream, deadline: deadline)
        if let deadline, deadline < armedDeadline {
            armedDeadline = deadline
            deadlineToArm = TransportActions.DeadlineTimer(deadline: deadline, streamID: streamID)
        }
        if isLarge {
            takeInLarge(body: [UInt8](rawBody), method: method, context: context, call: call, isStream: isStream)
            return
        }
        do throws(RPCError) {
            if header.isCompressed {
                try inflated.withUnsafeBytes { body in
                    Result { () throws(RPCError) in
                        try environment.start(method, body: body, context: context, call: call)
                    }
                }.get()
            } else {
                try environment.start(method, body: rawBody, context: context, call: call)
            }
        } catch {
            if calls.removeValue(forKey: streamID) != nil, call.complete(error) {
                FrameWriter.reply(streamID: streamID, error: error, into: &outbound)
            }
        }
    }

    /// The error a compressed request body that cannot be inflated gets.
    private static func inflateError(_ failure: Inflater.Failure) -> RPCError {
        switch failure {
        case .tooLarge(let limit):
            .messageTooLarge("the request body inflates to more than \(limit) bytes")
        case .corrupt(let reason):
            .badEncoding("the compressed request body is not valid raw deflate data: \(reason)")
        }
    }

    /// Inflates `body`, decodes it and starts the call's handler on the large-request pool (the
    /// handler runs there too, whatever its executor: every handler is `@Sendable`, and replies
    /// from any thread reach the loop through the port). The connection consumes no further frame
    /// until the port reports the request taken in, and the compressed body, copied off the
    /// connection's input, is counted in the memory budget meanwhile. Refusals answer as they
    /// would on the loop: a REPLY, or for a stream whose deadline passed while it waited, TRAILERS.
    private func takeInLarge(
        body: [UInt8], method: RegisteredMethod, context: CallContext, call: ServerCall, isStream: Bool
    ) {
        awaitsLargeRequest = true
        let budget = environment.memoryBudget
        budget.reserve(body.count, for: .inbound)
        let clock = environment.now
        let port = self.port
        let maxMessageBytes = limits.maxMessageBytes
        let pendingLimit = limits.streamPendingLimitBytes
        environment.offloadLargeRequest {
            defer { port.largeRequestTakenIn() }
            var inflated: [UInt8] = []
            do throws(Inflater.Failure) {
                defer { budget.release(body.count, for: .inbound) }
                guard !context.isExpired(now: clock()) else {
                    call.end(.deadlineExceeded("the deadline passed before the call ran"), isStream: isStream)
                    return
                }
                try body.withUnsafeBytes { raw in
                    Result { () throws(Inflater.Failure) in
                        try CompressionScratch.inflater.value.inflateIndependent(
                            raw, limit: maxMessageBytes, appendingTo: &inflated)
                    }
                }.get()
            } catch {
                call.end(Self.inflateError(error), isStream: false)
                return
            }
            do throws(RPCError) {
                try inflated.withUnsafeBytes { raw in
                    Result { () throws(RPCError) in try method.start(raw, context, call, pendingLimit, .immediate) }
                }.get()
            } catch {
                call.end(error, isStream: false)
            }
        }
    }

    /// The connection's large request has been taken in (on the loop, from the port): frames are
    /// consumed again.
    public func largeRequestTakenIn() -> TransportActions {
        awaitsLargeRequest = false
        return transportActions()
    }

    private func handleCancel(streamID: UInt32) {
        guard let live = calls.removeValue(forKey: streamID) else { return }
        _ = live.call.complete(.cancelled("the client cancelled the call"))
        live.call.terminate(.cancelled)
        callEnded()
    }

    /// Replies to a call that will not run.
    private func reject(_ streamID: UInt32, _ error: RPCError, header: CallHeader? = nil, methodIndex: Int? = nil) {
        logger.debug(
            "call refused",
            [("stream", String(streamID)), ("request_id", header?.requestID ?? ""), ("error", error.description)])
        FrameWriter.reply(streamID: streamID, error: error, into: &outbound)
        environment.observer?.callEnded(
            CallRecord(
                methodIndex: methodIndex, method: header?.method ?? "", appID: appID,
                onBehalfOf: header?.onBehalfOf ?? "",
                requestID: header?.requestID ?? "", peer: peer, streamID: streamID, code: error.code,
                errorCode: error.errorCode,
                durationNanoseconds: 0))
    }

    /// Sends GOAWAY with `error` and closes after flushing.
    private func fail(_ error: RPCError) {
        perform(machine.failed(error))
    }

    // MARK: Events from the transport

    /// Lets a handler completing on the loop append its frame straight into `outbound`.
    /// - Returns: what the transport does, or nil (and nothing written) when the call is no
    ///   longer live.
    public func deliverInline(streamID: UInt32, final: Bool, _ write: (inout [UInt8]) -> Void) -> TransportActions? {
        // Invariant (StateMachine): no call is live once the connection is closing or closed.
        guard calls.contains(streamID) else { return nil }
        write(&outbound)
        if final {
            calls.removeValue(forKey: streamID)
            callEnded()
        }
        return transportActions()
    }

    /// A frame completed by a handler (from the call's port, on the loop).
    public func deliver(streamID: UInt32, frame: [UInt8], final: Bool) -> TransportActions {
        append(streamID: streamID, frame: frame, final: final)
        return transportActions()
    }

    /// Frames the call's port queued for the connection, in order (on the loop): a fan-out's
    /// messages to the connection's streams, taken in one go.
    public func deliver(_ frames: ArraySlice<OutgoingFrame>) -> TransportActions {
        var index = frames.startIndex
        while index < frames.endIndex {
            if case .frame(let streamID, let bytes, let final) = frames[index] {
                append(streamID: streamID, frame: bytes, final: final)
                index += 1
                continue
            }
            // A run of messages (a fan-out's) goes into the output taken out of `self` for the
            // run, and the live calls are read from a local copy: the stored properties are
            // reached once per run, not twice per message (each reach is a dynamic exclusivity
            // check, which cost as much as writing the frame).
            var output: [UInt8] = []
            swap(&output, &outbound)
            let live = calls
            while index < frames.endIndex, case .message(let streamID, let body) = frames[index] {
                if live.contains(streamID) {
                    FrameWriter.streamMessage(streamID: streamID, encoded: body, deflater: nil, into: &output)
                }
                index += 1
            }
            swap(&output, &outbound)
        }
        return transportActions()
    }

    private func append(streamID: UInt32, frame: [UInt8], final: Bool) {
        guard calls.contains(streamID) else { return }
        if outbound.isEmpty && frame.count > Self.frameTakenWhole {
            outbound = frame
        } else {
            outbound.append(contentsOf: frame)
        }
        if final {
            calls.removeValue(forKey: streamID)
            callEnded()
        }
    }

    /// A delivered frame larger than this becomes the output itself when nothing else waits to be
    /// written, instead of being copied into it (a 4 MiB reply is a millisecond of the loop's time).
    static let frameTakenWhole = 64 * 1024

    /// The deadline timer fired: every call whose deadline has passed gets DEADLINE_EXCEEDED, and
    /// the timer is asked for the earliest deadline left.
    public func expireDeadlines(now: UInt64) -> TransportActions {
        armedDeadline = .max
        var expired: [UInt32] = []
        var next: (deadline: UInt64, streamID: UInt32)?
        for (streamID, live) in calls {
            guard let deadline = live.deadline else { continue }
            if deadline <= now {
                expired.append(streamID)
            } else if deadline < next?.deadline ?? .max {
                next = (deadline, streamID)
            }
        }
        for streamID in expired.sorted() { endExpired(streamID: streamID) }
        if let next {
            armedDeadline = next.deadline
            deadlineToArm = TransportActions.DeadlineTimer(deadline: next.deadline, streamID: next.streamID)
        }
        return transportActions()
    }

    /// The deadline of `streamID` passed: it gets DEADLINE_EXCEEDED unless already complete.
    public func deadlineExpired(streamID: UInt32) -> TransportActions {
        endExpired(streamID: streamID)
        return transportActions()
    }

    private func endExpired(streamID: UInt32) {
        let error = RPCError.deadlineExceeded("the call's deadline passed")
        guard let live = calls[streamID], live.call.complete(error) else { return }
        calls.removeValue(forKey: streamID)
        if live.isStream {
            FrameWriter.trailers(streamID: streamID, status: error.status, into: &outbound)
        } else {
            FrameWriter.reply(streamID: streamID, error: error, into: &outbound)
        }
        live.call.terminate(.deadlineExceeded)
        callEnded()
    }

    /// Periodic check of the handshake, idle and keepalive timers.
    public func tick(now: UInt64) -> TransportActions {
        self.now = now
        perform(machine.tick(now: now, callsInFlight: !calls.isEmpty))
        return transportActions()
    }

    /// Starts a graceful shutdown: GOAWAY naming the last stream the server will finish, streams
    /// told to end (their handlers finish them with UNAVAILABLE and where to resume), new calls
    /// refused. The connection closes once every call has completed.
    public func beginDrain() -> TransportActions {
        perform(machine.beginDrain(callsInFlight: !calls.isEmpty))
        return transportActions()
    }

    /// Ends every stream still open after the drain's grace period with UNAVAILABLE.
    public func forceEndStreams() -> TransportActions {
        let error = RPCError.unavailable("the server is shutting down")
        for (streamID, live) in calls where live.isStream && live.call.complete(error) {
            FrameWriter.trailers(streamID: streamID, status: error.status, into: &outbound)
            calls.removeValue(forKey: streamID)
        }
        perform(machine.streamsForceEnded(callsInFlight: !calls.isEmpty))
        return transportActions()
    }

    /// The connection is gone: its live calls end (the first `callsEndedAtOnce` now, the rest
    /// through `endClosedCalls` while `hasCallsToEnd`), and the app's count of connections drops.
    public func connectionClosed() {
        perform(machine.transportClosed())
        if countedInApp {
            countedInApp = false
            environment.appConnections?.close(app: appID)
        }
    }

    // MARK: Carrying out the state machine's actions

    private func perform(_ action: StateMachine.Action) {
        switch action {
        case .none:
            break
        case .sendPing(let token):
            withUnsafeBytes(of: token.littleEndian) { FrameWriter.ping(.ping, payload: $0, into: &outbound) }
        case .sendGoawayAndDrain(let error):
            FrameWriter.goaway(lastStreamID: lastStreamID, error: error, into: &outbound)
            for live in calls.values where live.isStream { live.call.terminate(.draining) }
        case .sendGoawayAndClose(let error, let reason):
            log(closing: reason, error)
            FrameWriter.goaway(lastStreamID: lastStreamID, error: error, into: &outbound)
            endAllCalls()
        case .close(let reason):
            log(closing: reason, nil)
            endAllCalls()
        }
    }

    private func log(closing reason: StateMachine.CloseReason, _ error: RPCError?) {
        switch reason {
        case .failure:
            // A refusal for the app's connection cap is counted on /metrics, not logged: a tenant
            // over its cap would otherwise log a line per attempt.
            guard let error, error.runtimeCode != .tooManyConnections else { break }
            if error.runtimeCode == .protocolViolation || error.code == .resourceExhausted {
                if appID.isEmpty && !handshakeFailureLogged() { break }
                logger.notice("protocol error; closing connection", [("error", error.description)])
            }
        case .idle:
            logger.debug("closing idle connection")
        case .handshakeTimeout:
            environment.observer?.transportEvent(.handshakeRefused(.timeout, .mrpc))
            if handshakeFailureLogged() {
                logger.info("closing connection: no HELLO within \(limits.handshakeTimeoutMs) ms")
            }
        case .keepaliveTimeout:
            logger.info("closing connection: no answer to keepalive PING")
        case .frameTimeout:
            environment.observer?.transportEvent(.connectionCut(.frameTimeout))
            logger.info("closing connection: a frame's rest did not arrive within \(limits.frameTimeoutMs) ms")
        case .shutdown, .shutdownBeforeHello, .drained, .transportClosed:
            break
        }
    }

    /// Counts a failed handshake of this peer's address: true when it gets its own log line,
    /// false when the address has had its share (the throttle reports it in a summary).
    private func handshakeFailureLogged() -> Bool {
        environment.authenticationThrottle?.failed(address: peerAddress, now: now) ?? true
    }

    /// What the transport does after the current event.
    private func transportActions() -> TransportActions {
        defer { deadlineToArm = nil }
        return TransportActions(
            write: !outbound.isEmpty, close: machine.closeRequested, armDeadlineTimer: deadlineToArm)
    }

    /// After a call left `calls`: when it was the last one, the idle timer starts now, and a
    /// draining connection has nothing left to finish and closes.
    private func callEnded() {
        guard calls.isEmpty else { return }
        perform(machine.lastCallEnded(at: environment.now()))
    }

    /// Calls a closing connection ends at once; the rest wait for `endClosedCalls`. Ending a call
    /// runs its termination handlers (a subscription's release, say): a connection closing with
    /// thousands of streams would hold its event loop, and every other connection on it, for as
    /// long as all of them take, so the transport ends them a slice per loop turn.
    public static let callsEndedAtOnce = 32

    /// A closed connection still has calls to end (`endClosedCalls`).
    public var hasCallsToEnd: Bool { !callsToEnd.isEmpty }

    /// Ends up to `limit` more of a closed connection's calls; returns how many it ended.
    @discardableResult
    public func endClosedCalls(limit: Int) -> Int { callsToEnd.end(limit: limit) }

    private func endAllCalls() {
        callsToEnd.append(contentsOf: calls.values.map(\.call))
        calls.removeAll()
        endClosedCalls(limit: Self.callsEndedAtOnce)
    }
}

/// Per-thread inflate context for compressed request bodies.
enum CompressionScratch {
    static let inflater = ThreadLocal { Inflater() }
}
