/// What the transport does after handing a connection's core an event; the core touches no socket.
///
/// One small value rather than a list, so an event on the hot path (bytes received, a reply
/// delivered) allocates nothing to say it; the three parts combine freely (a turn may write
/// replies, arm a deadline and close after a protocol error). Replies themselves are already in
/// the core's `outbound` (or, on HTTP/2, with the codec, which `takeOutput` moves there): the
/// transport writes them once at the end of its loop turn.
public struct TransportActions: Equatable, Sendable {
    /// A deadline for the connection's one deadline timer.
    public struct DeadlineTimer: Equatable, Sendable {
        /// The time (nanoseconds, on the server's clock) to fire at.
        public var deadline: UInt64
        /// The call whose deadline it is (for tests and logs; the timer serves every call).
        public var streamID: UInt32

        public init(deadline: UInt64, streamID: UInt32) {
            self.deadline = deadline
            self.streamID = streamID
        }
    }

    /// There are bytes to write.
    public var write: Bool
    /// Stop reading; close once the output is written.
    public var close: Bool
    /// Move the deadline timer here (cancelling the one armed); when it fires, call
    /// `expireDeadlines(now:)`, which asks for the next.
    public var armDeadlineTimer: DeadlineTimer?

    public init(write: Bool = false, close: Bool = false, armDeadlineTimer: DeadlineTimer? = nil) {
        self.write = write
        self.close = close
        self.armDeadlineTimer = armDeadlineTimer
    }
}
