public import Moderation

/// Where a subscription's events go: the RPC adapter wraps a server stream in it.
///
/// The hub hands each matching action's message, encoded once for every subscriber, to `send`;
/// the sink compresses and queues it for its connection. A sink never blocks the hub: when its
/// connection holds too much unwritten output it answers `.overloaded`, and the hub ends the
/// subscription so that one slow reader cannot slow the writer or the other subscribers.
public protocol EventSink: Sendable {
    /// Queues the stream's first message, before any event: the subscription is registered, and
    /// every matching action after `afterSeq` will follow (those through `headSeq` from the
    /// replay, when `headSeq` is greater). Clients wait for it to know their stream is live.
    func started(afterSeq: UInt64, headSeq: UInt64) -> EventSendOutcome
    /// Queues one encoded event.
    func send(encoded: [UInt8]) -> EventSendOutcome
    /// Waits up to `milliseconds` for the connection to drain below its limit (replay only,
    /// which runs on a worker thread); false when it did not.
    func waitForCapacity(milliseconds: Int) -> Bool
    /// Ends the stream.
    func end(_ reason: SubscriptionEnd)
    /// Registers what to do when the stream ends from outside (cancel, connection closed, server
    /// shutting down).
    func onClose(_ handler: @escaping @Sendable (SinkClosure) -> Void)
    /// A hint that `send` comes soon: asks for what it will touch to be brought into cache. The
    /// fan-out calls it three times per subscription, a few places ahead: with `depth` 0 for the
    /// sink's own state, then, once that has had time to arrive, with `depth` 1 for what that
    /// state points at, and with `depth` 2 for what that points at in turn. Changes nothing else;
    /// the default does nothing.
    func prefetch(depth: Int)
}

extension EventSink {
    public func prefetch(depth: Int) {}
}

/// What became of one `send`.
public enum EventSendOutcome: Sendable, Equatable {
    case sent
    /// Not sent: the connection holds more unwritten output than its limit.
    case overloaded
    /// Not sent: the stream has ended.
    case closed
}

/// Why the stream ended from outside.
public enum SinkClosure: Sendable, Equatable {
    /// The client cancelled, or the connection closed: nothing more can be sent.
    case gone
    /// The server is shutting down: end now, telling the client where to resume.
    case shuttingDown
}

/// How the hub ends a subscription.
public enum SubscriptionEnd: Sendable, Equatable {
    /// The subscriber did not keep up; it may resume after `lastSeq`.
    case slowConsumer(lastSeq: UInt64)
    /// The server is shutting down; the subscriber may resume after `lastSeq`.
    case shuttingDown(lastSeq: UInt64)
    /// The subscription failed (e.g. the store could not be read).
    case failed(code: String, message: String, lastSeq: UInt64)
    /// The subscription may not go on: its acting user was banned from the app
    /// (`ERR_USER_BANNED_FROM_APP`). `lastSeq` is the last action it sent.
    case revoked(ModerationError, lastSeq: UInt64)
}
