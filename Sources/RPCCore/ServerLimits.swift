/// The limits a server enforces on each connection, advertised (in part) in HELLO_ACK.
public struct ServerLimits: Sendable {
    /// Largest message body in bytes, after inflation.
    public var maxMessageBytes = 4 * 1024 * 1024
    /// A compressed request body that inflates to more than this is inflated, decoded and started
    /// on the large-request pool rather than on the event loop, one at a time per connection.
    public var inlineInflateBytes = 64 * 1024
    /// Largest CallHeader in bytes.
    public var maxCallHeaderBytes = 8 * 1024
    /// Calls in flight at once per connection.
    public var maxConcurrentCalls = 1024
    /// Time allowed between accepting a connection and receiving its HELLO.
    public var handshakeTimeoutMs = 10_000
    /// Largest HELLO payload (and largest frame of any kind before HELLO): a HELLO carries a key,
    /// a client name and a few words, so an unauthenticated peer never makes the server buffer more.
    public var maxHelloBytes = 4 * 1024
    /// Once a frame has begun to arrive, the rest must arrive within this time or the connection
    /// gets GOAWAY and closes: a peer cannot hold a partial frame (up to the largest CALL) in the
    /// server's memory for the whole idle timeout. Before HELLO the handshake timeout applies.
    public var frameTimeoutMs = 30_000
    /// A connection with no calls and no frame for this long is closed (0 = never).
    public var idleTimeoutMs = 300_000
    /// A connection with open streams and no inbound frame for this long gets a PING.
    public var keepaliveIntervalMs = 60_000
    /// After a keepalive PING, the peer has this long to send any frame before the connection closes.
    public var keepaliveTimeoutMs = 20_000
    /// Unwritten bytes above which the server stops reading from a connection (backpressure).
    public var maxPendingOutputBytes = 8 * 1024 * 1024
    /// Unwritten bytes above which a stream's `send` reports `.overloaded`.
    public var streamPendingLimitBytes = 1024 * 1024
    /// Once a call's head has arrived, its request message must have arrived whole within this
    /// time, or the call ends with DEADLINE_EXCEEDED (on gRPC a stream's head and its end come
    /// apart; a stream the peer never ends would hold its head for good).
    public var requestTimeoutMs = 30_000
    /// Bytes one connection's calls in flight may hold together — their heads (method, metadata,
    /// ids) and 1 KiB each for the call's own records (`ConnectionCore.callStateBytes`): a call
    /// that would pass it is refused (RESOURCE_EXHAUSTED, `ERR_OVERLOADED`). What they hold is
    /// counted in the memory budget too.
    public var maxHeldHeadBytes = 2 * 1024 * 1024
    /// The tighter limits of a connection with no API key (health checks only): calls in flight,
    /// and head bytes held. Its idle timeout, and the time each of its requests has to arrive
    /// whole, are the handshake timeout.
    public var anonymousMaxConcurrentCalls = 4
    public var anonymousMaxHeldHeadBytes = 16 * 1024

    public init() {}

    /// Largest frame payload accepted: a CALL with the largest header and the largest body.
    public var maxFramePayload: Int { maxMessageBytes + maxCallHeaderBytes + 4 + 1024 }
}
