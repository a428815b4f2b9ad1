/// What a `LoadThread` drives: one non-blocking connection with calls in flight, whatever its
/// protocol (`LoadConnection`, the framed protocol; `GRPCLoadConnection`, gRPC over HTTP/2), so
/// pacing, warm-up, measuring and the report are one piece of code for both.
protocol LoadTransport: AnyObject, Sendable {
    /// The socket, registered on the thread's epoll.
    var fd: Int32 { get }
    /// Calls sent and not yet completed.
    var inFlight: Int { get }
    /// Set by the thread once the connection is gone.
    var closed: Bool { get set }
    /// With a rate limit, when this connection's next call is due.
    var nextSend: UInt64 { get set }
    /// True while output is waiting for the socket to accept it.
    var writeBlocked: Bool { get }
    /// TLS: the last read needs the socket writable first.
    var readNeedsOutput: Bool { get }

    /// Queues one call with this pre-encoded request, sent at `now`.
    func appendCall(payload: [UInt8], now: UInt64)
    /// Writes what is queued, as far as the socket takes it.
    func flush()
    /// Reads everything available and reports each call it completed with `completed(sentAt,
    /// now, outcome)`, where `outcome` gives "OK" or the status name and `ERR_` code (asked only
    /// for measured calls), and what went wrong on the connection with `notice`.
    func readReplies(completed: (UInt64, UInt64, () -> String) -> Void, notice: (String) -> Void)
        -> LoadReadResult
}

/// What a turn of reading left of a load connection.
enum LoadReadResult {
    case open
    /// The connection is gone; the reason is reported while the run is not over (its end closes
    /// connections too).
    case ended(String)
}
