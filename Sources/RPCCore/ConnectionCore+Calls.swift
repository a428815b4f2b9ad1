import ProtoBridge

/// What a codec hands the core as it decodes: handshakes, calls' heads and requests, cancels.
extension ConnectionCore {
    // MARK: Authentication

    /// The handshake of a wire that sends its key once for the connection (our HELLO). No key at
    /// all opens the connection for the health checks only; a wrong key is refused (the caller
    /// sends GOAWAY with the error), logged as the throttle allows; a right one is counted
    /// against its app's cap of connections.
    public func authenticate(apiKey: String, appID: String, clientName: String) -> Result<Authenticated, RPCError> {
        guard !apiKey.isEmpty else {
            machine.authenticated(anonymous: true, at: now)
            logger.debug("connection opened without an API key: health checks only", [("client", clientName)])
            return .success(.anonymous)
        }
        guard let app = environment.authenticator.authenticate(apiKey: apiKey, appID: appID) else {
            // A correct key never gets here, so the throttle never slows one down.
            let logged = authenticationFailureLogged()
            environment.observer?.transportEvent(.authenticationFailed(wire ?? .mrpc, logged: logged))
            if logged { logger.notice("handshake refused: bad API key", [("client", clientName)]) }
            return .failure(.unauthenticated("the API key is not valid"))
        }
        if let error = countConnection(of: app) { return .failure(error) }
        machine.authenticated(anonymous: false, at: now)
        logger.debug("connection authenticated", [("client", clientName)])
        return .success(.app(app))
    }

    /// The key a request carries itself (gRPC, one per request): the app it names, or
    /// `.anonymous` for no key (which only the health checks accept: admission says so).
    /// - Throws: UNAUTHENTICATED for a wrong key; RESOURCE_EXHAUSTED `ERR_TOO_MANY_CONNECTIONS`
    ///   when the connection's first app already has its maximum of connections (the connection
    ///   is then failed too).
    public func authenticateRequest(apiKey: String, appID: String) throws(RPCError) -> Authenticated {
        guard !apiKey.isEmpty else { return .anonymous }
        if apiKey == lastAPIKey && appID == lastAppID { return .app(lastApp) }
        guard let app = environment.authenticator.authenticate(apiKey: apiKey, appID: appID) else {
            throw .unauthenticated("the API key is not valid")
        }
        if let error = countConnection(of: app) {
            fail(error)
            throw error
        }
        (lastAPIKey, lastAppID, lastApp) = (apiKey, appID, app)
        machine.authenticated(anonymous: false, at: now)
        return .app(app)
    }

    /// Counts the connection against `app`'s cap the first time it authenticates; the error when
    /// the app is full.
    private func countConnection(of app: String) -> RPCError? {
        guard authenticatedApp.isEmpty else { return nil }
        if let appConnections = environment.appConnections {
            guard appConnections.open(app: app) else {
                environment.observer?.transportEvent(.connectionRefused(.appFull))
                logger.debug("connection refused: the app has its maximum of connections", [("app", app)])
                return RPCError(
                    .tooManyConnections, "app \(app) already has its maximum of \(appConnections.limit) connections",
                    details: ["app_id": app, "limit": String(appConnections.limit)])
            }
            countedInApp = true
        }
        authenticatedApp = app
        logger = logger.with("app", app)
        return nil
    }

    /// Counts a failed authentication of this peer's address: true when it gets its own log
    /// line, false when the address has had its share (the throttle reports it in a summary).
    func authenticationFailureLogged() -> Bool {
        environment.authenticationThrottle?.failed(address: peerAddress, now: now) ?? true
    }

    // MARK: Calls

    /// What a call needs to pass before it is opened, whatever its wire: the connection not
    /// draining, room among its calls in flight and for its head, then the method's own
    /// admission (`ServerEnvironment.admit`); the tighter limits hold for a caller with no key.
    /// - Returns: the method; nil for a path the wire serves itself (`wireServed`), which needs a key.
    public func admit(_ head: CallHead, caller: Authenticated, wireServed: Bool = false) throws(RPCError)
        -> RegisteredMethod?
    {
        guard !machine.isDraining else { throw .unavailable("the server is shutting down; the call was not run") }
        let anonymous = caller == .anonymous
        let maxCalls =
            anonymous ? min(limits.anonymousMaxConcurrentCalls, limits.maxConcurrentCalls) : limits.maxConcurrentCalls
        guard calls.count < maxCalls else { throw .tooManyCalls(limit: maxCalls) }
        let maxHead = anonymous ? limits.anonymousMaxHeldHeadBytes : limits.maxHeldHeadBytes
        let holds = head.byteCount + Self.callStateBytes
        guard heldHeadBytes + holds <= maxHead else {
            throw .overloaded(
                "the calls in flight on this connection hold \(heldHeadBytes) bytes, and this one's \(holds) "
                    + "would pass the limit of \(maxHead); retry when fewer are in flight")
        }
        guard !wireServed else {
            guard !anonymous else { throw .unauthenticated("\(head.path) needs an API key, and the call carries none") }
            return nil
        }
        // The method of the last call, when this one calls it too (most do): its path compared,
        // not hashed — and a gRPC head reuses the last path's string, so equal strings are one.
        if let method = lastMethod, method.path == head.path {
            return try environment.admit(method, caller: caller, now: now)
        }
        let method = try environment.admit(path: head.path, caller: caller, now: now)
        lastMethod = method
        return method
    }

    /// Opens a call admitted on `streamID`: from now on it is live — its deadline runs, its
    /// head is counted, a cancel or the connection's end reaches it — and, with its `request`,
    /// it starts. A call whose request is still to come (`request` nil) has the request timeout
    /// to complete it (`requestArrived`).
    /// - Parameters:
    ///   - method: nil for a call the wire serves itself (its end comes with `endWireServed`).
    ///   - compression: how its response messages go, from what the client accepts.
    public func open(
        streamID: UInt32, head: CallHead, method: RegisteredMethod?, caller: Authenticated,
        compression: MessageCompression, request: RequestBody?
    ) {
        guard head.metadata.isEmpty else {
            // Metadata may name the envelope's fields (most calls carry none: no copy for them).
            do throws(RPCError) {
                let normalized = try head.normalized()
                open(streamID, normalized, method, caller, compression, request)
            } catch {
                lastStreamID = max(lastStreamID, streamID)
                refuse(streamID: streamID, error, head: head, caller: caller, methodIndex: method?.index)
            }
            return
        }
        open(streamID, head, method, caller, compression, request)
    }

    private func open(
        _ streamID: UInt32, _ head: CallHead, _ method: RegisteredMethod?, _ caller: Authenticated,
        _ compression: MessageCompression, _ request: RequestBody?
    ) {
        lastStreamID = max(lastStreamID, streamID)
        if case .anonymous = caller { machine.authenticated(anonymous: true, at: now) }
        let deadline = head.timeoutNanoseconds.map { now &+ min($0, UInt64.max / 4) }
        let context = CallContext(
            method: head.path, streamID: streamID, appID: caller.appID, onBehalfOf: head.onBehalfOf,
            idempotencyKey: head.idempotencyKey, requestID: head.requestID, metadata: head.metadata,
            deadline: deadline, peer: peer, receivedAt: now)
        let call = ServerCall(
            context: context, compression: compression, port: port, methodIndex: method?.index,
            isInternal: method?.isInternal, observer: environment.observer, clock: environment.now,
            memoryBudget: environment.memoryBudget, wire: wireKind)
        // Registered before the handler runs: an inline handler may complete it at once.
        calls[streamID] = LiveCall(
            call: call, isStream: method?.serverStreaming ?? true, deadline: deadline,
            headBytes: head.byteCount + Self.callStateBytes, receiving: request == nil && method != nil,
            servedByWire: method == nil)
        heldHeadBytes += head.byteCount + Self.callStateBytes
        if let deadline, deadline < armedDeadline {
            armedDeadline = deadline
            deadlineToArm = TransportActions.DeadlineTimer(deadline: deadline, streamID: streamID)
        }
        guard let method else { return }
        if let request {
            start(streamID: streamID, method: method, call: call, context: context, request: request)
        } else {
            receivingOrder.append((streamID, now))
        }
    }

    /// The request of a call opened before it (`open` with no request) arrived whole.
    public func requestArrived(streamID: UInt32, method: RegisteredMethod, _ request: RequestBody) {
        let call = calls.modify(streamID) { live -> ServerCall? in
            guard live.receiving else { return nil }
            live.receiving = false
            return live.call
        }
        guard let call = call ?? nil else { return }
        start(streamID: streamID, method: method, call: call, context: call.context, request: request)
    }

    /// A call's request message as its wire received it.
    public struct RequestBody {
        public var bytes: UnsafeRawBufferPointer
        /// How it is compressed (nil: not at all).
        public var encoding: CompressionFormat?

        public init(bytes: UnsafeRawBufferPointer, encoding: CompressionFormat?) {
            self.bytes = bytes
            self.encoding = encoding
        }
    }

    /// Inflates (a little, here; more on the large-request pool), decodes and starts the handler.
    private func start(
        streamID: UInt32, method: RegisteredMethod, call: ServerCall, context: CallContext, request: RequestBody
    ) {
        environment.observer?.requestReceived(methodIndex: method.index, wire: wireKind)
        guard let encoding = request.encoding else {
            guard request.bytes.count <= limits.maxMessageBytes else {
                return failStart(
                    streamID, call,
                    .messageTooLarge(
                        "the request message of \(request.bytes.count) bytes exceeds the limit of \(limits.maxMessageBytes)"
                    ))
            }
            do throws(RPCError) {
                try environment.start(method, body: request.bytes, context: context, call: call)
            } catch {
                failStart(streamID, call, error)
            }
            return
        }
        // Inflated here up to the inline limit; a body that inflates past it is taken in on the
        // large-request pool instead (inflating 4 MiB and decoding and answering it held a loop,
        // and every connection on it, for tens of milliseconds).
        let inlineLimit = min(limits.maxMessageBytes, limits.inlineInflateBytes)
        var inflated: [UInt8] = []
        do throws(Inflater.Failure) {
            try MessageCompression.inflater(encoding).inflateIndependent(
                request.bytes, limit: inlineLimit, appendingTo: &inflated)
        } catch .tooLarge where inlineLimit < limits.maxMessageBytes {
            return takeInLarge(body: [UInt8](request.bytes), encoding: encoding, method: method, call: call)
        } catch {
            return failStart(streamID, call, Self.inflateError(error, encoding))
        }
        do throws(RPCError) {
            try inflated.withUnsafeBytes { body in
                Result { () throws(RPCError) in
                    try environment.start(method, body: body, context: context, call: call)
                }
            }.get()
        } catch {
            failStart(streamID, call, error)
        }
    }

    /// A call that failed before its handler ran (its request did not decode or inflate): a
    /// refusal, as the wire answers one.
    private func failStart(_ streamID: UInt32, _ call: ServerCall, _ error: RPCError) {
        guard call.complete(error) else { return }
        write(streamID: streamID, .refused(error))
    }

    /// The error a compressed request message that cannot be inflated gets.
    public static func inflateError(_ failure: Inflater.Failure, _ encoding: CompressionFormat) -> RPCError {
        switch failure {
        case .tooLarge(let limit):
            .messageTooLarge("the request message inflates to more than \(limit) bytes")
        case .corrupt(let reason):
            .badEncoding("the compressed request message is not valid \(encoding) data: \(reason)")
        }
    }

    /// Inflates `body`, decodes it and starts the call's handler on the large-request pool (the
    /// handler runs there too, whatever its executor: every handler is `@Sendable`, and replies
    /// from any thread reach the loop through the port). The connection decodes no further input
    /// until the port reports the request taken in, and the compressed body, copied off the
    /// connection's input, is counted in the memory budget meanwhile.
    private func takeInLarge(body: [UInt8], encoding: CompressionFormat, method: RegisteredMethod, call: ServerCall) {
        awaitsLargeRequest = true
        let budget = environment.memoryBudget
        budget.reserve(body.count, for: .inbound)
        let environment = self.environment
        let port = self.port
        let maxMessageBytes = limits.maxMessageBytes
        environment.offloadLargeRequest {
            defer { port.largeRequestTakenIn() }
            var inflated: [UInt8] = []
            do throws(Inflater.Failure) {
                defer { budget.release(body.count, for: .inbound) }
                guard !call.context.isExpired(now: environment.now()) else {
                    call.end(.deadlineExceeded("the deadline passed before the call ran"))
                    return
                }
                try body.withUnsafeBytes { raw in
                    Result { () throws(Inflater.Failure) in
                        try MessageCompression.inflater(encoding).inflateIndependent(
                            raw, limit: maxMessageBytes, appendingTo: &inflated)
                    }
                }.get()
            } catch {
                call.refuse(Self.inflateError(error, encoding))
                return
            }
            do throws(RPCError) {
                try inflated.withUnsafeBytes { raw in
                    Result { () throws(RPCError) in
                        try method.start(
                            raw, call.context, call, environment.limits.streamPendingLimitBytes, .immediate)
                    }
                }.get()
            } catch {
                call.refuse(error)
            }
        }
    }

    /// The connection's large request has been taken in (on the loop, from the port): input is
    /// decoded again.
    public func largeRequestTakenIn() -> TransportActions {
        awaitsLargeRequest = false
        return transportActions()
    }

    /// Refuses a call that will not run: its end is written (our REPLY, gRPC's trailers-only
    /// response) and recorded for the access log and metrics. A refusal for the key is counted
    /// and logged as the throttle allows, so a flood of wrong keys cannot fill the disk.
    public func refuse(
        streamID: UInt32, _ error: RPCError, head: CallHead?, caller: Authenticated, methodIndex: Int? = nil
    ) {
        lastStreamID = max(lastStreamID, streamID)
        var logged = true
        if error.runtimeCode == .unauthenticated {
            logged = authenticationFailureLogged()
            environment.observer?.transportEvent(.authenticationFailed(wire ?? .mrpc, logged: logged))
            if logged { logger.notice("call refused: \(error.message)", [("path", head?.path ?? "")]) }
        } else {
            logger.debug(
                "call refused",
                [("stream", String(streamID)), ("path", head?.path ?? ""), ("error", error.description)])
        }
        codec?.writeEnd(streamID: streamID, error: error, isStream: false)
        environment.observer?.callStarted(methodIndex: methodIndex, wire: wire ?? .mrpc)
        environment.observer?.callEnded(
            CallRecord(
                methodIndex: methodIndex, method: head?.path ?? "", appID: caller.appID,
                onBehalfOf: head?.onBehalfOf ?? "", requestID: head?.requestID ?? "", peer: peer,
                streamID: streamID, code: error.code, errorCode: error.errorCode, durationNanoseconds: 0,
                wire: wire ?? .mrpc, logged: logged))
    }

    /// A call opened before its request arrived whose request cannot run (more than one message,
    /// one too large, broken framing): refused as a call that did not run.
    public func refuseOpen(streamID: UInt32, _ error: RPCError) {
        guard let live = calls[streamID] else { return }
        failStart(streamID, live.call, error)
    }

    /// The client gave up the call (our CANCEL, gRPC's RST_STREAM): it ends without an answer.
    public func cancel(streamID: UInt32, reason: String) {
        guard let live = remove(streamID) else { return }
        _ = live.call.complete(.cancelled(reason))
        live.call.terminate(.cancelled)
    }

    /// A call the wire serves itself ended: with `error`, or OK.
    public func endWireServed(streamID: UInt32, error: RPCError?) {
        guard let live = calls[streamID], live.servedByWire else { return }
        guard live.call.complete(error?.code ?? .ok, errorCode: error?.errorCode ?? "") else { return }
        writeEnd(streamID, error)
    }

    /// True while `streamID` is a call in flight.
    public func isLive(_ streamID: UInt32) -> Bool { calls.contains(streamID) }

    // MARK: Response parts (from the call's port, on the loop)

    /// A part a handler completed.
    public func deliver(streamID: UInt32, _ part: ResponsePart) -> TransportActions {
        write(streamID: streamID, part)
        return transportActions()
    }

    /// Parts the port queued for the connection, in order: a fan-out's messages to the
    /// connection's streams, taken in one go.
    public func deliver(_ parts: ArraySlice<OutgoingPart>) -> TransportActions {
        guard let codec else { return transportActions() }
        var index = parts.startIndex
        while index < parts.endIndex {
            guard case .message = parts[index].part else {
                write(streamID: parts[index].streamID, parts[index].part)
                index += 1
                continue
            }
            // A run of messages (a fan-out's) goes to the codec whole, with the live calls read
            // from a local copy: the stored properties are reached once per run, not per message.
            var end = index + 1
            while end < parts.endIndex, case .message = parts[end].part { end += 1 }
            let live = calls
            codec.writeMessages(parts[index..<end]) { live.contains($0) }
            index = end
        }
        return transportActions()
    }

    /// Lets a handler completing on the loop write its unary answer straight into the wire's
    /// output. Returns what the transport does, or nil (nothing written) when the call is no
    /// longer live.
    public func deliverInline(streamID: UInt32, _ write: MessageWriter) -> TransportActions? {
        // Invariant (ConnectionStateMachine): no call is live once the connection is closing or closed.
        guard calls.contains(streamID), let codec else { return nil }
        codec.writeReply(streamID: streamID, write)
        remove(streamID)
        return transportActions()
    }

    private func write(streamID: UInt32, _ part: ResponsePart) {
        guard let live = calls[streamID], let codec else { return }
        switch part {
        case .reply(let message):
            codec.writeReply(streamID: streamID, message)
            remove(streamID)
        case .message(let message):
            codec.writeMessage(streamID: streamID, message)
        case .end(let error):
            codec.writeEnd(streamID: streamID, error: error, isStream: live.isStream)
            remove(streamID)
        case .refused(let error):
            codec.writeEnd(streamID: streamID, error: error, isStream: false)
            remove(streamID)
        }
    }

    /// Writes a call's end and takes it out of the live calls.
    func writeEnd(_ streamID: UInt32, _ error: RPCError?) {
        guard let live = calls[streamID] else { return }
        codec?.writeEnd(streamID: streamID, error: error, isStream: live.isStream)
        remove(streamID)
    }

    /// Takes a call out of the live ones: its head is no longer held, the codec lets go of it,
    /// and when it was the last, the idle timer starts (or a drain ends).
    @discardableResult
    func remove(_ streamID: UInt32) -> LiveCall? {
        guard let live = calls.removeValue(forKey: streamID) else { return nil }
        heldHeadBytes -= live.headBytes
        codec?.callRemoved(streamID: streamID)
        if calls.isEmpty { perform(machine.lastCallEnded(at: environment.now())) }
        return live
    }
}
