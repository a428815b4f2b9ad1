/// What the runtime reports as connections and calls come and go: the feed for metrics and the
/// access log, kept out of the runtime itself.
///
/// Called on event loops and worker threads, once per event: implementations must be cheap and
/// thread-safe (atomic counters, a log line). Class-bound: a stream's writer holds one and calls
/// it for every message of a fan-out, and a class reference is called without copying an
/// existential box first.
public protocol CallObserver: AnyObject, Sendable {
    /// A connection was accepted.
    func connectionOpened()
    /// A connection closed.
    func connectionClosed()
    /// Bytes read from and written to sockets.
    func transferred(received: Int, sent: Int)
    /// A call began: its head was taken (a call refused at once begins and ends together).
    /// Every call begun ends with `callEnded`; the difference is the calls in flight.
    func callStarted(methodIndex: Int?, wire: WireKind)
    /// A call's request message arrived and goes to its handler.
    func requestReceived(methodIndex: Int, wire: WireKind)
    /// One message of a server stream: its size encoded, and on the wire (smaller when deflated).
    func streamMessage(encodedBytes: Int, wireBytes: Int, methodIndex: Int?, wire: WireKind)
    /// A call ended: with which status, after how long.
    func callEnded(_ call: CallRecord)
    /// Something happened to the transport outside any call (accept failed, a connection refused
    /// or cut, a wrong API key).
    func transportEvent(_ event: TransportEvent)
    /// A call of `app` was refused before it ran because the app is over its request rate
    /// (`ERR_RATE_LIMITED` from the runtime's `RateLimiter`; a service's own refusals with that
    /// code are not reported here). Its end is reported to `callEnded` as well.
    func callRateLimited(app: String)
}

extension CallObserver {
    /// Observers that count only ends ignore starts.
    public func callStarted(methodIndex: Int?, wire: WireKind) {}

    /// Observers that count only ends ignore requests.
    public func requestReceived(methodIndex: Int, wire: WireKind) {}

    /// Observers that count only calls and traffic ignore transport events.
    public func transportEvent(_ event: TransportEvent) {}

    /// Observers that count only calls and traffic ignore the rate limit's refusals.
    public func callRateLimited(app: String) {}
}

/// One ended call, as the access log and metrics see it.
public struct CallRecord: Sendable {
    /// The call's context, shared with its handler: the method's path as the client sent it, the
    /// app, the acting user, the request id, the peer and the stream.
    public let context: CallContext
    /// The method's index in the `MethodTable`, or nil when the path is not a method of the server.
    public let methodIndex: Int?
    public let code: StatusCode
    public let errorCode: String
    /// From the CALL frame to the call's last frame.
    public let durationNanoseconds: UInt64
    /// A call of the runtime's reflection or health services (`RuntimeServices.isInternal`).
    public let isInternal: Bool
    /// The wire the call came on.
    public let wire: WireKind
    /// False when the call was refused for its key and the authentication throttle kept it out of
    /// the log (it is still counted): a flood of wrong keys writes a summary, not a line each.
    public let logged: Bool

    public var method: String { context.method }
    public var appID: String { context.appID }
    public var onBehalfOf: String { context.onBehalfOf }
    public var requestID: String { context.requestID }
    public var peer: String { context.peer }
    public var streamID: UInt32 { context.streamID }

    /// The record of a call that ran: its context is the handler's (no field copied).
    public init(
        context: CallContext, methodIndex: Int?, code: StatusCode, errorCode: String, durationNanoseconds: UInt64,
        isInternal: Bool?, wire: WireKind, logged: Bool = true
    ) {
        self.context = context
        self.methodIndex = methodIndex
        self.code = code
        self.errorCode = errorCode
        self.durationNanoseconds = durationNanoseconds
        // From the path when the caller does not know (a refused call): a short scan, off the
        // hot path; a served call's method says it.
        self.isInternal = isInternal ?? RuntimeServices.isInternal(path: context.method)
        self.wire = wire
        self.logged = logged
    }

    /// The record of a call from its fields (a refused call, which has no context of its own).
    public init(
        methodIndex: Int?, method: String, appID: String, onBehalfOf: String, requestID: String, peer: String,
        streamID: UInt32, code: StatusCode, errorCode: String, durationNanoseconds: UInt64, isInternal: Bool? = nil,
        wire: WireKind = .mrpc, logged: Bool = true
    ) {
        self.init(
            context: CallContext(
                method: method, streamID: streamID, appID: appID, onBehalfOf: onBehalfOf, requestID: requestID,
                peer: peer),
            methodIndex: methodIndex, code: code, errorCode: errorCode, durationNanoseconds: durationNanoseconds,
            isInternal: isInternal, wire: wire, logged: logged)
    }
}
