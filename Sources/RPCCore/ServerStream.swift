public import ProtoBridge
import RPCMessages
import Synchronization

/// The sending side of a server stream, usable from any thread.
///
/// Messages are encoded (and, when the client accepts deflate, compressed with the stream's own
/// raw-deflate context) on the sending thread, under the stream's lock so that compression order
/// and delivery order agree. `send` reports a reader that does not keep up instead of queueing
/// without bound; the producer then ends the stream (with RESOURCE_EXHAUSTED and where to resume).
public final class ServerStream<Message: ProtoMessage>: Sendable {
    public let call: ServerCall
    /// Bytes the connection may hold unwritten before `send` reports `.overloaded`.
    public let pendingLimit: Int
    private let state: Mutex<State>

    private struct State {
        var deflater: RawDeflater?
        var finished = false
        var sent = 0
    }

    public init(call: ServerCall, pendingLimit: Int) {
        self.call = call
        self.pendingLimit = pendingLimit
        state = Mutex(State(deflater: call.acceptsDeflate ? RawDeflater() : nil))
    }

    /// The outcome of `send`.
    public enum SendResult: Sendable, Equatable {
        /// Handed to the connection.
        case sent
        /// Not sent: the connection already holds more unwritten bytes than the limit.
        case overloaded
        /// Not sent: the stream has ended.
        case closed
    }

    /// Sends one message.
    @discardableResult
    public func send(_ message: Message) -> SendResult {
        send(encoded: message.serializedBytes())
    }

    /// Sends one message already encoded by the caller — for fan-out, where the same message
    /// goes to many streams and is encoded once. (Compression is still per stream.)
    @discardableResult
    public func send(encoded body: [UInt8]) -> SendResult {
        state.withLock { state in
            guard !state.finished, !call.isCompleted else { return .closed }
            guard call.port.pendingBytes <= pendingLimit else { return .overloaded }
            var frame: [UInt8] = []
            FrameWriter.streamMessage(streamID: call.streamID, encoded: body, deflater: state.deflater, into: &frame)
            call.observer?.streamMessage(encodedBytes: body.count, wireBytes: frame.count - FrameHeader.size)
            call.port.deliver(streamID: call.streamID, frame: frame, final: false)
            state.sent += 1
            return .sent
        }
    }

    /// Bytes the stream's connection holds unwritten (compared with `pendingLimit` by `send`).
    public var pendingBytes: Int { call.port.pendingBytes }

    /// Messages sent so far.
    public var sentCount: Int { state.withLock { $0.sent } }

    /// Ends the stream with TRAILERS: OK when `error` is nil.
    public func finish(_ error: RPCError? = nil) {
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            state.deflater = nil
            guard call.completeByHandler(error?.code ?? .ok, errorCode: error?.errorCode ?? "") else { return }
            var frame: [UInt8] = []
            FrameWriter.trailers(streamID: call.streamID, status: error?.status ?? Status(), into: &frame)
            call.port.deliver(streamID: call.streamID, frame: frame, final: true)
        }
    }

    /// Registers a handler for the stream ending from outside (cancel, deadline, connection
    /// closed, server draining); see `ServerCall.onTermination`.
    public func onTermination(_ handler: @escaping @Sendable (CallTermination) -> Void) {
        call.onTermination(handler)
    }
}
