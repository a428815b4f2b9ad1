public import ProtoBridge

/// Completes a unary call from any thread: the response, an error, or a recorded reply.
///
/// The first completion wins; later ones (and completions after a cancel, a deadline or the end
/// of the connection) send nothing. Encoding (and compression, when the client accepts it)
/// happens on the completing thread, so a worker that finishes a call also pays for its reply.
public struct UnaryResponder<Response: ProtoMessage>: Sendable {
    public let call: ServerCall

    public init(call: ServerCall) { self.call = call }

    /// Replies with status OK and `response`.
    public func succeed(_ response: Response) {
        guard call.completeByHandler(.ok) else { return }
        let compression = call.compression
        if call.port.replyOnLoop(streamID: call.streamID, { compression.append(response, to: &$0) }) { return }
        var bytes: [UInt8] = []
        // Room for most replies at once, rather than growing the buffer field by field.
        bytes.reserveCapacity(Self.replyCapacity)
        response.encode(appendingTo: &bytes)
        call.port.send(streamID: call.streamID, .reply(compression.independent(bytes)))
    }

    /// Bytes a reply made off the loop starts with (a mutation's reply of an action and a group
    /// is 300–600 bytes).
    static var replyCapacity: Int { 512 }

    /// Replies with `error`.
    public func fail(_ error: RPCError) {
        guard call.completeByHandler(error) else { return }
        call.port.send(streamID: call.streamID, .end(error))
    }

    /// Replies with `result`.
    public func complete(_ result: Result<Response, RPCError>) {
        switch result {
        case .success(let response): succeed(response)
        case .failure(let error): fail(error)
        }
    }

    /// Replies with what `RecordedReply.encode` kept of an earlier call (an idempotent retry gets
    /// exactly the first call's reply).
    public func replay(payload: [UInt8]) {
        let part = RecordedReply.part(of: payload)
        switch part {
        case .reply(let message):
            guard call.completeByHandler(.ok) else { return }
            call.port.send(streamID: call.streamID, .reply(call.compression.independent(message.bytes)))
        case .end(let error):
            guard call.completeByHandler(error?.code ?? .ok, errorCode: error?.errorCode ?? "") else { return }
            call.port.send(streamID: call.streamID, part)
        case .message, .refused:
            preconditionFailure("a recorded reply is a response or an error")
        }
    }
}
