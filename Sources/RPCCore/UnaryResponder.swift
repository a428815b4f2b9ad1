public import ProtoBridge
import RPCMessages

/// Completes a unary call from any thread: the response, an error, or a recorded reply.
///
/// The first completion wins; later ones (and completions after a cancel, a deadline or the end
/// of the connection) send nothing. Encoding happens on the completing thread, so a worker that
/// finishes a call also pays for its reply.
public struct UnaryResponder<Response: ProtoMessage>: Sendable {
    public let call: ServerCall

    public init(call: ServerCall) { self.call = call }

    /// Replies with status OK and `response`.
    public func succeed(_ response: Response) {
        guard call.completeByHandler(.ok) else { return }
        let streamID = call.streamID
        let compress = call.acceptsDeflate
        if call.port.writeOnLoop(
            streamID: streamID, final: true,
            { FrameWriter.reply(streamID: streamID, response: response, compress: compress, into: &$0) })
        {
            return
        }
        var frame: [UInt8] = []
        // Room for most replies at once, rather than growing the frame field by field.
        frame.reserveCapacity(Self.replyCapacity)
        FrameWriter.reply(streamID: call.streamID, response: response, compress: call.acceptsDeflate, into: &frame)
        call.port.deliver(streamID: call.streamID, frame: frame, final: true)
    }

    /// Bytes a reply frame made off the loop starts with (a mutation's reply of an action and a
    /// group is 300–600 bytes).
    static var replyCapacity: Int { 512 }

    /// Replies with `error`.
    public func fail(_ error: RPCError) {
        guard call.completeByHandler(error) else { return }
        let streamID = call.streamID
        if call.port.writeOnLoop(
            streamID: streamID, final: true, { FrameWriter.reply(streamID: streamID, error: error, into: &$0) })
        {
            return
        }
        var frame: [UInt8] = []
        FrameWriter.reply(streamID: call.streamID, error: error, into: &frame)
        call.port.deliver(streamID: call.streamID, frame: frame, final: true)
    }

    /// Replies with `result`.
    public func complete(_ result: Result<Response, RPCError>) {
        switch result {
        case .success(let response): succeed(response)
        case .failure(let error): fail(error)
        }
    }

    /// Replies with a REPLY payload recorded earlier by `FrameWriter.replyPayload(for:)`
    /// (an idempotent retry gets exactly the first call's reply).
    public func replay(payload: [UInt8]) {
        let status = FrameWriter.status(ofReplyPayload: payload)
        guard call.completeByHandler(StatusCode(rawValue: status.code), errorCode: status.errorCode) else { return }
        var frame: [UInt8] = []
        FrameWriter.reply(streamID: call.streamID, payload: payload, into: &frame)
        call.port.deliver(streamID: call.streamID, frame: frame, final: true)
    }
}
