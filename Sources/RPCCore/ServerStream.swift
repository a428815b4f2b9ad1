public import ProtoBridge
import RPCMessages
import Synchronization

/// The outcome of sending a server stream's message.
public enum StreamSendResult: Sendable, Equatable {
    /// Handed to the connection.
    case sent
    /// Not sent: the connection already holds more unwritten bytes than the limit.
    case overloaded
    /// Not sent: the stream has ended.
    case closed
}

/// The sending side of a server stream, usable from any thread: a typed face over its
/// `StreamWriter`, which does the work for every message type alike (a fan-out calls the
/// writer directly, with no generic code on the way).
public final class ServerStream<Message: ProtoMessage>: Sendable {
    public typealias SendResult = StreamSendResult

    public let writer: StreamWriter
    public var call: ServerCall { writer.call }
    /// Bytes the connection may hold unwritten before `send` reports `.overloaded`.
    public var pendingLimit: Int { writer.pendingLimit }

    public init(call: ServerCall, pendingLimit: Int) {
        writer = StreamWriter(call: call, pendingLimit: pendingLimit)
    }

    /// Bytes a stream's deflate context is counted for in the memory budget.
    public static var deflaterBytes: Int { StreamWriter.deflaterBytes }

    /// Sends one message.
    @discardableResult
    public func send(_ message: Message) -> SendResult {
        writer.send(encoded: message.serializedBytes())
    }

    /// Sends one message already encoded by the caller (see `StreamWriter.send(encoded:)`).
    @discardableResult
    public func send(encoded body: [UInt8]) -> SendResult { writer.send(encoded: body) }

    /// Bytes the stream's connection holds unwritten.
    public var pendingBytes: Int { writer.pendingBytes }

    /// Messages sent so far.
    public var sentCount: Int { writer.sentCount }

    /// True while the stream holds a deflate context.
    public var holdsDeflater: Bool { writer.holdsDeflater }

    /// Ends the stream with TRAILERS: OK when `error` is nil.
    public func finish(_ error: RPCError? = nil) { writer.finish(error) }

    /// Registers a handler for the stream ending from outside (see `ServerCall.onTermination`).
    public func onTermination(_ handler: @escaping @Sendable (CallTermination) -> Void) {
        writer.onTermination(handler)
    }
}

/// What sends a server stream's messages, whatever their type.
///
/// Messages are encoded and compressed on the sending thread, as the call's `MessageCompression`
/// says: on our protocol through the stream's own raw-deflate context, under the stream's lock
/// so that compression order and delivery order agree; on gRPC each message on its own. `send` reports a reader that does not keep up instead of queueing
/// without bound; the producer then ends the stream (with RESOURCE_EXHAUSTED and where to resume).
///
/// The deflate context (24 KiB, `Deflater`) is made on the first message worth compressing,
/// not with the stream: a subscription that waits for events holds none. It is counted in the
/// server's memory budget (kind `.compression`) while it exists; when the budget has no room,
/// messages go uncompressed (the COMPRESSED flag is per frame, so the client reads either) until
/// it has. The context is freed, and its bytes given back, when the stream ends: by `finish`, at
/// the first `send` after the call ended from outside, or when the stream itself is freed.
public final class StreamWriter: Sendable {
    public let call: ServerCall
    /// The call's port, kept here: reached through the call on every message, the existential
    /// is copied (and retained) each time.
    public let port: any CallPort
    /// Bytes the connection may hold unwritten before `send` reports `.overloaded`.
    public let pendingLimit: Int
    private let state: Mutex<State>

    private struct State {
        var deflater: Deflater?
        /// Bytes of the budget `deflater` holds.
        var deflaterBytes = 0
        var finished = false
        /// The call was told of an end from outside (cancel, deadline, connection closed, drain):
        /// from then on `send` checks whether it has completed. Every such end of a running call
        /// is told (`ServerCall.terminate`), or follows a drain that was.
        var callTerminated = false
        var sent = 0
    }

    /// Bytes a stream's deflate context is counted for in the memory budget.
    public static var deflaterBytes: Int {
        Deflater.estimatedBytes(windowBits: Deflater.streamWindowBits, memoryLevel: Deflater.streamMemoryLevel)
    }

    /// The call's fields a message needs, kept here: a fan-out touches thousands of streams per
    /// event, and every other object a message reaches is one more cache miss.
    private let streamID: UInt32
    private let compression: MessageCompression
    private let observer: (any CallObserver)?
    private let methodIndex: Int?
    private let wire: WireKind

    public init(call: ServerCall, pendingLimit: Int) {
        self.call = call
        port = call.port
        streamID = call.streamID
        compression = call.compression
        observer = call.observer
        methodIndex = call.methodIndex
        wire = call.wire
        self.pendingLimit = pendingLimit
        state = Mutex(State())
        call.onTermination { [weak self] _ in
            self?.state.withLock { $0.callTerminated = true }
        }
    }

    deinit {
        state.withLock { releaseDeflater(&$0) }
    }

    /// Sends one message already encoded by the caller — for fan-out, where the same message
    /// goes to many streams and is encoded once. (Compression is still per stream.)
    @discardableResult
    public func send(encoded body: [UInt8]) -> StreamSendResult {
        state.withLock { state in
            // The call is asked only once it was told of an end from outside: it lives elsewhere
            // in memory, and a fan-out reaches thousands of these writers per event.
            guard !state.finished, !(state.callTerminated && call.isCompleted) else {
                releaseDeflater(&state)
                return .closed
            }
            guard port.pendingBytes <= pendingLimit else { return .overloaded }
            switch compression {
            case .framedDeflate where body.count >= Self.compressionThreshold:
                if let deflater = deflater(&state) {
                    var compressed: [UInt8] = []
                    body.withUnsafeBytes { deflater.compressStreamMessage($0, appendingTo: &compressed) }
                    observer?.streamMessage(
                        encodedBytes: body.count, wireBytes: compressed.count, methodIndex: methodIndex, wire: wire)
                    port.send(streamID: streamID, .message(ResponseMessage(bytes: compressed, compressed: true)))
                } else {
                    sendAsIs(body)
                }
            case .grpc:
                let message = compression.independent(body)
                observer?.streamMessage(
                    encodedBytes: body.count, wireBytes: message.bytes.count, methodIndex: methodIndex, wire: wire)
                port.send(streamID: streamID, .message(message))
            case .none, .framedDeflate:
                sendAsIs(body)
            }
            state.sent += 1
            return .sent
        }
    }

    /// The bytes as they are, shared with every other stream they go to.
    private func sendAsIs(_ body: [UInt8]) {
        observer?.streamMessage(
            encodedBytes: body.count, wireBytes: body.count, methodIndex: methodIndex, wire: wire)
        port.sendMessage(streamID: streamID, body: body)
    }

    /// Stream messages smaller than this go uncompressed even on a stream compressed through its
    /// own context (which an uncompressed message does not disturb).
    public static let compressionThreshold = 32

    /// Bytes the stream's connection holds unwritten (compared with `pendingLimit` by `send`).
    public var pendingBytes: Int { port.pendingBytes }

    /// Messages sent so far.
    public var sentCount: Int { state.withLock { $0.sent } }

    /// True while the stream holds a deflate context.
    public var holdsDeflater: Bool { state.withLock { $0.deflater != nil } }

    /// Ends the stream with TRAILERS: OK when `error` is nil.
    public func finish(_ error: RPCError? = nil) {
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            releaseDeflater(&state)
            guard call.completeByHandler(error?.code ?? .ok, errorCode: error?.errorCode ?? "") else { return }
            port.send(streamID: call.streamID, .end(error))
        }
    }

    /// Registers a handler for the stream ending from outside (cancel, deadline, connection
    /// closed, server draining); see `ServerCall.onTermination`.
    public func onTermination(_ handler: @escaping @Sendable (CallTermination) -> Void) {
        call.onTermination(handler)
    }

    /// The stream's deflate context, made now if the budget has room for it; nil means "send
    /// uncompressed".
    private func deflater(_ state: inout State) -> Deflater? {
        if let deflater = state.deflater { return deflater }
        let bytes = Self.deflaterBytes
        if let budget = call.memoryBudget {
            guard budget.tryReserve(bytes, for: .compression) else { return nil }
            state.deflaterBytes = bytes
        }
        let deflater = Deflater()
        state.deflater = deflater
        return deflater
    }

    private func releaseDeflater(_ state: inout State) {
        state.deflater = nil
        if state.deflaterBytes > 0, let budget = call.memoryBudget {
            budget.release(state.deflaterBytes, for: .compression)
        }
        state.deflaterBytes = 0
    }
}
