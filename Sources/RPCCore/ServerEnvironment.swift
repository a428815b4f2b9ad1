/// What every connection of a server shares, whichever wire it speaks: names, limits, methods,
/// keys, threads, clock, observers and budgets.
public struct ServerEnvironment: Sendable {
    public var serverName: String
    public var serverVersion: String
    /// HELLO_ACK's `schema_digest`: "sha256:HEX" of the descriptor set reflection serves,
    /// so that a tool holding it from before need not fetch it again; empty for none.
    public var schemaDigest = ""
    public var limits: ServerLimits
    public var methods: MethodTable
    public var authenticator: any Authenticator
    public var logger: Logger
    /// Runs blocking work on a worker thread.
    public var offload: @Sendable (@escaping @Sendable () -> Void) -> Void
    /// Runs the work of a request too large for the loop (a compressed body that inflates past
    /// `ServerLimits.inlineInflateBytes`): inflating, decoding and starting its handler. A pool
    /// of its own, so such requests never hold the workers every storage read waits for.
    public var offloadLargeRequest: @Sendable (@escaping @Sendable () -> Void) -> Void
    /// Runs work on the calling event loop once it has read its turn's input from every
    /// connection (at once off a loop); nil: at once. For handlers registered with
    /// `afterTurnInput` (`MethodTable.addUnary`).
    public var afterTurnInput: (@Sendable (@escaping @Sendable () -> Void) -> Void)?
    /// The server's clock, in nanoseconds: what the connections' timers run on.
    public var now: @Sendable () -> UInt64
    /// Told of every call's end (metrics, access log); nil for none.
    public var observer: (any CallObserver)?
    /// Refuses calls over an app's request rate; nil for no limit.
    public var rateLimiter: (any RateLimiter)?
    /// What clients make the server hold, counted against the operator's limit; shared by
    /// every connection of the server. Past its limit, new calls are refused (ERR_OVERLOADED).
    public var memoryBudget: MemoryBudget
    /// Open connections per app against the per-app cap, checked when a connection first
    /// authenticates; nil for no cap.
    public var appConnections: AppConnections?
    /// Keeps a flood of wrong API keys, bad handshakes and silent connections out of the log
    /// (one summary instead of a line each); nil logs every one.
    public var authenticationThrottle: AuthenticationThrottle?
    /// Makes the codec of standard gRPC (HTTP/2) for a connection that speaks it; nil: gRPC is
    /// not served, and an HTTP/2 preface is refused as a bad one.
    public var grpc: (any WireCodecFactory)?

    public init(
        serverName: String, serverVersion: String, limits: ServerLimits, methods: MethodTable,
        authenticator: any Authenticator, logger: Logger,
        offload: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
        now: @escaping @Sendable () -> UInt64, observer: (any CallObserver)? = nil,
        rateLimiter: (any RateLimiter)? = nil, memoryBudget: MemoryBudget = .unlimited(),
        appConnections: AppConnections? = nil, authenticationThrottle: AuthenticationThrottle? = nil,
        offloadLargeRequest: (@Sendable (@escaping @Sendable () -> Void) -> Void)? = nil,
        grpc: (any WireCodecFactory)? = nil
    ) {
        self.serverName = serverName
        self.serverVersion = serverVersion
        self.limits = limits
        self.methods = methods
        self.authenticator = authenticator
        self.logger = logger
        self.offload = offload
        self.offloadLargeRequest = offloadLargeRequest ?? offload
        self.now = now
        self.observer = observer
        self.rateLimiter = rateLimiter
        self.memoryBudget = memoryBudget
        self.appConnections = appConnections
        self.authenticationThrottle = authenticationThrottle
        self.grpc = grpc
    }
}
