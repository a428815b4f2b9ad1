internal import CSystemShims
internal import Glibc
public import RPCCore
import Synchronization
public import TLSSupport
import ThreadSupport

/// The RPC server: event loops (one per usable core), their listeners, and a worker pool.
///
/// The loops share each listening socket, each watching it with EPOLLEXCLUSIVE, so a connection
/// wakes one loop and is served there for its whole life; no acceptor thread hands it over.
/// Every listener serves our framed protocol, and standard gRPC when a codec for it is configured
/// (`grpc`): a connection's first bytes, or TLS's ALPN, say which. The server knows methods and
/// connections, never what the methods do.
public final class RPCServer: Sendable {
    /// How the server runs.
    public struct Configuration: Sendable {
        public var host = "127.0.0.1"
        public var port: UInt16 = 7600
        /// Event loops; 0 means one per usable core.
        public var eventLoops = 0
        /// Worker threads for blocking handlers; 0 means max(2, usable cores).
        public var workers = 0
        /// Pin each loop to one of the usable cores.
        public var pinLoops = false
        public var limits = ServerLimits()
        public var serverName = "mrpc-server"
        public var serverVersion = "0.0.0"
        /// What HELLO_ACK says of the reflected descriptor set ("sha256:HEX"); empty for nothing.
        public var schemaDigest = ""
        /// Connections above this count get GOAWAY `ERR_TOO_MANY_CONNECTIONS` and are closed at
        /// once on accept.
        public var maxConnections = 100_000
        /// Connections one app may hold; one more gets GOAWAY `ERR_TOO_MANY_CONNECTIONS` at HELLO.
        /// nil for no cap (the process's setting, `--max-connections-per-app`, has one).
        public var maxConnectionsPerApp: Int?
        /// How many failed handshakes of one address (and of all) are logged one by one.
        public var authenticationThrottle = AuthenticationThrottle.Configuration()
        public var logger = Logger()
        /// Told of connections, traffic and every call's end (metrics, access log).
        public var observer: (any CallObserver)?
        /// Per-app request rate limit; nil for none.
        public var rateLimiter: (any RateLimiter)?
        /// What clients make the server hold, against the operator's limit (`--memory-budget`).
        public var memoryBudget = MemoryBudget.unlimited()
        /// TLS on the main listener: every connection must complete a TLS handshake first (a
        /// plaintext client is refused). nil: plaintext only. A reload of the context applies to
        /// the connections accepted after it.
        public var tls: ReloadableTLSContext?
        /// Listeners besides the main one (`host`, `port`, `tls`), each with its own address and
        /// TLS; each serves exactly what the main one serves.
        public var extraListeners: [ListenerConfiguration] = []
        /// Standard gRPC's codec: set, every listener serves gRPC too; nil: our protocol only.
        public var grpc: (any WireCodecFactory)?
        /// What the loops' timers run on (handshake, idle, keepalive, deadlines, drain): the
        /// system's monotonic clock, or a test's `ManualClock`.
        public var clock: any ServerClock = SystemClock.shared

        public init() {}
    }

    /// A listener besides the main one.
    public struct ListenerConfiguration: Sendable {
        /// What the operator calls it (the flag that set it), for errors and logs.
        public var name: String
        public var host: String
        public var port: UInt16
        /// TLS on it; nil: plaintext.
        public var tls: ReloadableTLSContext?

        public init(name: String, host: String, port: UInt16, tls: ReloadableTLSContext?) {
            self.name = name
            self.host = host
            self.port = port
            self.tls = tls
        }
    }

    public let configuration: Configuration
    private let methods: MethodTable
    private let authenticator: any Authenticator
    private let state = Mutex<State>(State())

    private struct State {
        var loops: [ServerLoop] = []
        var workers: WorkerPool?
        var largeRequests: WorkerPool?
        var boundPort: UInt16 = 0
        /// The extra listeners' ports, by name.
        var boundExtraPorts: [String: UInt16] = [:]
        var draining = false
    }

    public init(configuration: Configuration, methods: MethodTable, authenticator: any Authenticator) {
        self.configuration = configuration
        self.methods = methods
        self.authenticator = authenticator
    }

    /// Binds the listeners and starts the loops and workers.
    /// - Returns: the bound port (useful when configured with port 0).
    /// - Throws: `SystemError` when the address cannot be bound (e.g. the port is taken).
    @discardableResult
    public func start() throws(SystemError) -> UInt16 {
        let cores = usableCPUCount()
        let loopCount = configuration.eventLoops > 0 ? configuration.eventLoops : cores
        let workers = WorkerPool(count: configuration.workers > 0 ? configuration.workers : max(2, cores))
        // Large compressed requests (ServerLimits.inlineInflateBytes): half a thread per loop, so
        // a flood of them takes at most half the loops' cores and never a storage worker.
        let largeRequests = WorkerPool(count: max(1, loopCount / 2), name: "large-request")
        let throttle = AuthenticationThrottle(configuration: configuration.authenticationThrottle)
        var environment = ServerEnvironment(
            serverName: configuration.serverName, serverVersion: configuration.serverVersion,
            limits: configuration.limits, methods: methods, authenticator: authenticator,
            logger: configuration.logger, offload: { workers.submit($0) },
            now: { [clock = configuration.clock] in clock.now }, observer: configuration.observer,
            rateLimiter: configuration.rateLimiter, memoryBudget: configuration.memoryBudget,
            appConnections: configuration.maxConnectionsPerApp.map { AppConnections(limit: $0) },
            authenticationThrottle: throttle, offloadLargeRequest: { largeRequests.submit($0) },
            grpc: configuration.grpc)
        environment.schemaDigest = configuration.schemaDigest
        environment.afterTurnInput = { EventLoop.afterTurnInput($0) }
        // One listening socket per address, watched by every loop with EPOLLEXCLUSIVE so that one
        // loop wakes per connection. (Not SO_REUSEPORT: it would let a second server bind the
        // same port.)
        let wanted =
            [
                ListenerConfiguration(
                    name: "", host: configuration.host, port: configuration.port, tls: configuration.tls)
            ]
            + configuration.extraListeners
        var served: [ServerLoop.ServedListener] = []
        var ports: [UInt16] = []
        for listener in wanted {
            var bound: UInt16 = 0
            let fd = listener.host.withCString { cshim_listen($0, listener.port, 4096, 0, 1, &bound) }
            guard fd >= 0 else {
                for opened in served { for _ in 0..<loopCount { opened.listener.release() } }
                workers.shutdown()
                largeRequests.shutdown()
                let name = listener.name.isEmpty ? "" : " (\(listener.name))"
                throw SystemError("listen on \(listener.host):\(listener.port)\(name)", errno: -fd)
            }
            served.append(ServerLoop.ServedListener(listener: Listener(fd: fd, loops: loopCount), tls: listener.tls))
            ports.append(bound)
        }
        var loops: [ServerLoop] = []
        let shared = ServerLoop.Shared(
            counter: ConnectionCounter(limit: configuration.maxConnections), throttle: throttle,
            holdings: HoldingBoard(loops: loopCount), acceptFailures: LogSummary(intervalNanoseconds: 10_000_000_000),
            refusals: LogSummary(intervalNanoseconds: 10_000_000_000), clock: configuration.clock)
        for index in 0..<loopCount {
            do {
                loops.append(
                    try ServerLoop(index: index, listeners: served, environment: environment, shared: shared))
            } catch {
                for loop in loops { loop.stop() }
                workers.shutdown()
                largeRequests.shutdown()
                throw error
            }
        }
        for (index, loop) in loops.enumerated() {
            let cpu = configuration.pinLoops ? cshim_usable_cpu(Int32(index % cores)) : -1
            loop.start(cpu: cpu >= 0 ? cpu : nil)
        }
        state.withLock { state in
            state.loops = loops
            state.workers = workers
            state.largeRequests = largeRequests
            state.boundPort = ports[0]
            for (listener, port) in zip(configuration.extraListeners, ports.dropFirst()) {
                state.boundExtraPorts[listener.name] = port
            }
        }
        return ports[0]
    }

    /// The port the main listener is bound to.
    public var boundPort: UInt16 { state.withLock { $0.boundPort } }

    /// The port the extra listener called `name` is bound to; nil when there is none.
    public func boundPort(named name: String) -> UInt16? { state.withLock { $0.boundExtraPorts[name] } }

    /// Returns once every loop has taken in what reached it before the call and written what that
    /// asked for: after a test moves a `ManualClock`, the timers that came due have run and their
    /// output is flushed; before it, what the test sent has been read.
    ///
    /// Three rounds of a task through every loop's inbox: a turn handles its events (the socket
    /// reads, the inbox) in the kernel's order and flushes at its end, so the task of one round
    /// may run before a read of the same turn; the next round's runs in a later turn, after that
    /// turn's flush, and the last one after anything those turns scheduled at once.
    public func waitForLoops() {
        let loops = state.withLock { $0.loops }
        for _ in 0..<3 {
            for loop in loops {
                let done = BlockingSemaphore()
                loop.loop.execute { done.signal() }
                done.wait()
            }
        }
    }

    /// Open connections across all loops.
    public var connectionCount: Int { state.withLock { $0.loops.first?.shared.counter.value ?? 0 } }

    /// Graceful shutdown: stop accepting, send GOAWAY on every connection, let in-flight calls
    /// finish and streams end, then close. After `gracePeriodMs`, streams still open are ended
    /// with UNAVAILABLE and remaining connections are closed. Returns when everything stopped.
    public func shutdown(gracePeriodMs: Int = 10_000) {
        let (loops, pools) = state.withLock { state -> ([ServerLoop], [WorkerPool]) in
            state.draining = true
            return (state.loops, [state.workers, state.largeRequests].compactMap { $0 })
        }
        for loop in loops { loop.beginDrain() }
        let clock = configuration.clock
        let deadline = clock.now + UInt64(max(0, gracePeriodMs)) * 1_000_000
        var forced = false
        while loops.contains(where: { $0.shared.counter.value > 0 }) {
            if clock.now >= deadline {
                if forced { break }
                forced = true
                for loop in loops { loop.forceEndStreams() }
                usleep(100_000)
                for loop in loops { loop.closeAll() }
            }
            usleep(5_000)
        }
        for loop in loops { loop.stop() }
        for pool in pools { pool.shutdown() }
        state.withLock { $0.loops = [] }
    }
}

/// Counts open connections across loops, against the configured maximum.
final class ConnectionCounter: Sendable {
    let limit: Int
    private let count = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    var value: Int { count.load(ordering: .relaxed) }

    /// True when a new connection may be kept (and counts it).
    func admit() -> Bool {
        if count.add(1, ordering: .relaxed).newValue > limit {
            count.subtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    func release() { count.subtract(1, ordering: .relaxed) }
}
