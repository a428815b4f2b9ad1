public import ModerationMessages
import ProtoBridge
public import RPCCore
import RPCPosix
import Synchronization

/// A `Subscribe` stream on a client connection, recording every action it delivers (decoded) and
/// how the stream ended; tests wait on it with deadlines.
public final class EventRecorder: Sendable {
    private let log: Log
    private let stream: ClientStream

    /// The recorded state, in a class so the stream's callbacks can hold it.
    private final class Log: Sendable {
        let state: Mutex<State>
        init(keepsMessages: Bool) { state = Mutex(State(keepsMessages: keepsMessages)) }
    }

    private struct State {
        var keepsMessages: Bool
        var seqs: [UInt64] = []
        var actions: [Action] = []
        var bodies: [[UInt8]] = []
        var wireBytes = 0
        var compressedMessages = 0
        var undecodable = 0
        /// The stream's first message, where delivery begins; nil until it arrives.
        var started: SubscriptionStarted?
        /// Messages with `started` set after the first (never expected).
        var extraStarts = 0
        /// nil while open; `.some(nil)` after an OK end.
        var end: RPCError??
    }

    /// - Parameter keepsMessages: false keeps only the seqs (`actions` and `bodies` stay empty), so a
    ///   long stream costs the test's process little memory.
    init(connection: ClientConnection, request: SubscribeRequest, options: CallOptions, keepsMessages: Bool = true) {
        let log = Log(keepsMessages: keepsMessages)
        self.log = log
        stream = connection.stream(
            path: ModerationMethods.subscribe.path, body: request.serializedBytes(), options: options,
            onMessage: { message in
                let decoded = try? SubscribeResponse(serializedBytes: message.body)
                log.state.withLock { state in
                    state.wireBytes += message.wireBytes
                    if message.compressed { state.compressedMessages += 1 }
                    if let started = decoded?.started, decoded?.action == nil {
                        if state.started == nil && state.seqs.isEmpty && state.undecodable == 0 {
                            state.started = started
                        } else {
                            state.extraStarts += 1
                        }
                        return
                    }
                    guard let action = decoded?.action else {
                        state.undecodable += 1
                        return
                    }
                    state.seqs.append(action.seq)
                    if state.keepsMessages {
                        state.bodies.append(message.body)
                        state.actions.append(action)
                    }
                }
            },
            onEnd: { error in log.state.withLock { $0.end = .some(error) } })
    }

    /// The actions received so far, in arrival order.
    public var actions: [Action] { log.state.withLock { $0.actions } }

    /// The seqs of the actions received so far.
    public var seqs: [UInt64] { log.state.withLock { $0.seqs } }

    /// The seq of the last action received (0 before the first).
    public var lastSeq: UInt64 { log.state.withLock { $0.seqs.last ?? 0 } }

    /// Every message body as received (inflated), for byte comparisons.
    public var bodies: [[UInt8]] { log.state.withLock { $0.bodies } }

    /// Bytes of message bodies on the wire (compressed where the frame was).
    public var wireBytes: Int { log.state.withLock { $0.wireBytes } }

    /// Messages that came compressed.
    public var compressedMessages: Int { log.state.withLock { $0.compressedMessages } }

    /// Messages whose body was not a `SubscribeResponse` with an action.
    public var undecodable: Int { log.state.withLock { $0.undecodable } }

    /// The stream's first message (`started`): nil until it arrives.
    public var started: SubscriptionStarted? { log.state.withLock { $0.started } }

    /// `started` messages that were not the stream's first message (the protocol allows none).
    public var misplacedStarts: Int { log.state.withLock { $0.extraStarts } }

    /// True once the stream has ended.
    public var hasEnded: Bool { log.state.withLock { $0.end != nil } }

    /// How the stream ended: nil while open, `.some(nil)` for OK, else the error.
    public var end: RPCError?? { log.state.withLock { $0.end } }

    /// Waits for the stream's first message, which says the subscription is live; returns it.
    /// - Throws: `TestFailure` when it has not arrived after `timeoutMs`.
    @discardableResult
    public func waitForStart(timeoutMs: Int = 10_000) throws -> SubscriptionStarted {
        var started: SubscriptionStarted?
        waitUntil(timeoutMs: timeoutMs, pollMs: 1) {
            started = self.started
            return started != nil || hasEnded
        }
        guard let started else {
            throw TestFailure(
                "no started message after \(timeoutMs) ms (end: \(String(describing: end)), \(seqs.count) actions)")
        }
        return started
    }

    /// Waits until at least `count` actions have arrived.
    @discardableResult
    public func waitForCount(_ count: Int, timeoutMs: Int = 10_000) -> Bool {
        waitUntil(timeoutMs: timeoutMs, pollMs: 2) { log.state.withLock { $0.seqs.count >= count } }
    }

    /// Waits until an action with seq `seq` or later has arrived.
    @discardableResult
    public func waitForSeq(_ seq: UInt64, timeoutMs: Int = 10_000) -> Bool {
        waitUntil(timeoutMs: timeoutMs, pollMs: 2) { lastSeq >= seq }
    }

    /// Waits for the end of the stream; returns its error (nil for OK).
    /// - Throws: `TestFailure` when the stream is still open after `timeoutMs`.
    public func waitForEnd(timeoutMs: Int = 10_000) throws -> RPCError? {
        var end: RPCError??
        waitUntil(timeoutMs: timeoutMs, pollMs: 2) {
            end = self.end
            return end != nil
        }
        guard let end else {
            throw TestFailure("the stream is still open after \(timeoutMs) ms (\(actions.count) actions)")
        }
        return end
    }

    /// Cancels the stream.
    public func cancel() { stream.cancel() }
}
