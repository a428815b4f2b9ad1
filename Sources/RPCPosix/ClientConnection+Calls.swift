public import ProtoBridge
public import RPCCore
import RPCMessages
import Synchronization

/// The calling styles. Each is a thin layer over `start` (which registers the call and writes its
/// CALL frame): a typed or an already-encoded request; a completion, a blocking wait or `await`;
/// one reply or a stream of messages.
extension ClientConnection {
    /// Starts a unary call with an encoded request body; `completion` gets the encoded response
    /// body or the call's error (on the reader thread, or at once if the call could not start).
    public func call(
        path: String, body: [UInt8], options: CallOptions = CallOptions(),
        completion: @escaping @Sendable (Result<[UInt8], RPCError>) -> Void
    ) {
        start(path: path, body: body, options: options, receiver: .unary(completion))
    }

    /// Makes a unary call with an encoded request body and waits for the encoded response.
    public func call(path: String, body: [UInt8], options: CallOptions = CallOptions()) throws(RPCError) -> [UInt8] {
        try Waiter.wait { call(path: path, body: body, options: options, completion: $0) }.get()
    }

    /// Starts a unary call; `completion` runs on the reader thread.
    public func unary<Request, Response>(
        _ method: ProtoMethod<Request, Response>, _ request: Request, options: CallOptions = CallOptions(),
        completion: @escaping @Sendable (Result<Response, RPCError>) -> Void
    ) {
        let receiver = PendingCall.Receiver.unary { result in
            completion(
                result.flatMap { body in
                    Result { () throws(RPCError) in try Response(fromServer: body) }
                })
        }
        // Encoded straight into the CALL frame (and deflated there when asked to).
        start(path: method.path, options: options, receiver: receiver) { streamID, header, out in
            FrameWriter.call(
                streamID: streamID, header: header, request: request, compress: options.compressRequest, into: &out)
        }
    }

    /// Makes a unary call and waits for its result.
    public func unary<Request, Response>(
        _ method: ProtoMethod<Request, Response>, _ request: Request, options: CallOptions = CallOptions()
    ) throws(RPCError) -> Response {
        try Waiter.wait { unary(method, request, options: options, completion: $0) }.get()
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
        let streamID = start(
            path: path, body: body, options: options, receiver: .stream(onMessage: onMessage, onEnd: onEnd))
        return ClientStream(connection: self, streamID: streamID)
    }

    /// Runs a server stream with an encoded request body to its end: `onMessage` gets each message
    /// as it arrives (on the reader thread); returns the final status (nil for OK).
    public func streamToEnd(
        path: String, body: [UInt8], options: CallOptions = CallOptions(),
        onMessage: @escaping @Sendable (StreamMessage) -> Void
    ) -> RPCError? {
        Waiter.wait { stream(path: path, body: body, options: options, onMessage: onMessage, onEnd: $0) }
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
                    onMessage(try Response(fromServer: message.body))
                } catch {
                    self?.abandon(message.streamID, failing: error)
                }
            }, onEnd: onEnd)
    }

    /// Cancels a call: the server is sent CANCEL and the call fails locally with CANCELLED.
    public func cancel(streamID: UInt32) {
        abandon(streamID, failing: .cancelled("the call was cancelled by the client"))
    }

    /// Ends a call on this side: it fails with `error` and the server is sent CANCEL. Nothing
    /// happens when the call has already ended.
    func abandon(_ streamID: UInt32, failing error: RPCError) {
        guard let call = state.withLock({ $0.calls.removeValue(forKey: streamID) }) else { return }
        enqueue { FrameWriter.cancel(streamID: streamID, into: &$0) }
        call.fail(error)
    }

    /// `start` for a request body that is already encoded.
    @discardableResult
    private func start(path: String, body: [UInt8], options: CallOptions, receiver: PendingCall.Receiver) -> UInt32 {
        start(path: path, options: options, receiver: receiver) { streamID, header, out in
            body.withUnsafeBytes { FrameWriter.call(streamID: streamID, header: header, body: $0, into: &out) }
        }
    }

    /// The one way a call starts: has `encode` append its CALL frame under the next stream id,
    /// registers it, then writes what the socket takes now. A call that cannot start (the
    /// connection is closed or going away, too much output waits, or the call is over the limits
    /// of the server's HELLO_ACK) fails at once, on this thread, and nothing of it is sent.
    /// - Returns: the call's stream id (0 when it could not start).
    @discardableResult
    private func start(
        path: String, options: CallOptions, receiver: PendingCall.Receiver,
        encode: (UInt32, CallHeader, inout [UInt8]) -> CallSizes
    ) -> UInt32 {
        let deadline = options.timeoutMs > 0 ? monotonicNow() + UInt64(options.timeoutMs) * 1_000_000 : nil
        let pending = PendingCall(deadline: deadline, receiver: receiver)
        let header = CallHeader(
            method: path, timeoutMs: options.timeoutMs, onBehalfOf: options.onBehalfOf,
            idempotencyKey: options.idempotencyKey, requestID: options.requestID, metadata: options.metadata,
            acceptEncodings: options.acceptDeflate ? ["deflate"] : [])
        var refusal: RPCError?
        var wake = false
        // Invariant: ids are taken and frames appended under the writer's lock, so stream ids go
        // out increasing (the server refuses a stream id that does not grow). The frame is encoded
        // before the call is registered (its sizes decide whether it may go) and taken back out
        // when it may not: nothing is flushed in between.
        let streamID: UInt32 = writer.withLock { writer in
            let streamID = writer.lastStreamID + 1
            let mark = writer.output.count
            let waiting = writer.unwritten
            let sizes = encode(streamID, header, &writer.output)
            refusal = helloAck.refusal(for: sizes)
            if refusal == nil {
                refusal = state.withLock { state -> RPCError? in
                    if let closed = state.closed { return closed }
                    if state.goawayLastStream != nil {
                        return .unavailable("the server sent GOAWAY; open a new connection")
                    }
                    guard waiting < Self.pendingOutputLimit else {
                        return RPCError(
                            .resourceExhausted,
                            "more than \(Self.pendingOutputLimit) bytes wait to be sent: the server is not reading"
                        )
                    }
                    state.calls[streamID] = pending
                    return nil
                }
            }
            guard refusal == nil else {
                writer.output.removeLast(writer.output.count - mark)
                return 0
            }
            writer.lastStreamID = streamID
            wake = !flush(&writer)
            return streamID
        }
        if wake { wakeReader() }
        if let refusal { pending.fail(refusal) }
        return streamID
    }
}
