internal import CSystemShims
internal import Glibc
public import RPCCore
import Synchronization

/// The RPC server: event loops (one per usable core), their listeners, and a worker pool.
///
/// The loops share one listening socket, each watching it with EPOLLEXCLUSIVE, so a connection
/// wakes one loop and is served there for its whole life; no acceptor thread hands it over.
/// The server knows methods and connections, never what the methods do.
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
        /// Connections above this count are closed at once on accept.
        public var maxConnections = 100_000
        public var logger = Logger()
        /// Told of connections, traffic and every call's end (metrics, access log).
        public var observer: (any CallObserver)?
        /// Per-app request rate limit; nil for none.
        public var rateLimiter: (any RateLimiter)?
        /// What clients make the server hold, against the operator's limit (`--memory-budget`).
        public var memoryBudget = MemoryBudget.unlimited()

        public init() {}
    }

    public let configuration: Configuration
    private let methods: MethodTable
    private let authenticator: any Authenticator
    private let state = Mutex<State>(State())

    private struct State {
        var loops: [ServerLoop] = []
        var workers: WorkerPool?
        var boundPort: UInt16 = 0
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
        let environment = ServerSession.Environment(
            serverName: configuration.serverName, serverVersion: configuration.serverVersion,
            limits: configuration.limits, methods: methods, authenticator: authenticator,
            logger: configuration.logger, offload: { workers.submit($0) }, now: { monotonicNow() },
            observer: configuration.observer, rateLimiter: configuration.rateLimiter,
            memoryBudget: configuration.memoryBudget)
        // One listening socket, watched by every loop with EPOLLEXCLUSIVE so that one loop wakes
        // per connection. (Not SO_REUSEPORT: it would let a second server bind the same port.)
        var port: UInt16 = 0
        let listenFD = configuration.host.withCString { cshim_listen($0, configuration.port, 4096, 0, 1, &port) }
        guard listenFD >= 0 else {
            workers.shutdown()
            throw SystemError("listen on \(configuration.host):\(configuration.port)", errno: -listenFD)
        }
        let listener = Listener(fd: listenFD, loops: loopCount)
        var loops: [ServerLoop] = []
        let connectionCount = ConnectionCounter(limit: configuration.maxConnections)
        for index in 0..<loopCount {
            do {
                loops.append(
                    try ServerLoop(index: index, listener: listener, environment: environment, counter: connectionCount)
                )
            } catch {
                for loop in loops { loop.stop() }
                workers.shutdown()
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
            state.boundPort = port
        }
        return port
    }

    /// The port the listeners are bound to.
    public var boundPort: UInt16 { state.withLock { $0.boundPort } }

    /// Open connections across all loops.
    public var connectionCount: Int { state.withLock { $0.loops.first?.counter.value ?? 0 } }

    /// Graceful shutdown: stop accepting, send GOAWAY on every connection, let in-flight calls
    /// finish and streams end, then close. After `gracePeriodMs`, streams still open are ended
    /// with UNAVAILABLE and remaining connections are closed. Returns when everything stopped.
    public func shutdown(gracePeriodMs: Int = 10_000) {
        let (loops, workers) = state.withLock { state -> ([ServerLoop], WorkerPool?) in
            state.draining = true
            return (state.loops, state.workers)
        }
        for loop in loops { loop.beginDrain() }
        let deadline = monotonicNow() + UInt64(max(0, gracePeriodMs)) * 1_000_000
        var forced = false
        while loops.contains(where: { $0.counter.value > 0 }) {
            if monotonicNow() >= deadline {
                if forced { break }
                forced = true
                for loop in loops { loop.forceEndStreams() }
                usleep(100_000)
                for loop in loops { loop.closeAll() }
            }
            usleep(5_000)
        }
        for loop in loops { loop.stop() }
        workers?.shutdown()
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

/// The listening socket shared by the loops; closed when the last loop lets go of it.
final class Listener: Sendable {
    let fd: Int32
    private let holders: Atomic<Int>

    init(fd: Int32, loops: Int) {
        self.fd = fd
        holders = Atomic(loops)
    }

    func release() {
        if holders.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { Glibc.close(fd) }
    }
}

/// One event loop of the server with its connections; it accepts from the shared listener.
final class ServerLoop: EventHandler, @unchecked Sendable {
    // Invariant: `registry`, `nextConnection`, `listenRegistration`, `accepting` and `tickTimer`
    // are touched only on `loop`'s thread.
    let loop: EventLoop
    let counter: ConnectionCounter
    private let listener: Listener
    private let environment: ServerSession.Environment
    private let registry = ConnectionRegistry()
    private var nextConnection: UInt64 = 0
    /// The listener's registration; nil when this loop does not watch it.
    private var listenRegistration: UInt32?
    private var accepting = true
    /// The once-a-second check of every connection's handshake, idle and keepalive timers.
    private var tickTimer: TimerHandle?

    init(index: Int, listener: Listener, environment: ServerSession.Environment, counter: ConnectionCounter)
        throws(SystemError)
    {
        loop = try EventLoop(index: index)
        self.listener = listener
        self.environment = environment
        self.counter = counter
        registry.onRemove = { [counter] _ in counter.release() }
    }

    func start(cpu: Int32?) {
        loop.start(name: "loop-\(loop.index)", cpu: cpu)
        loop.execute { [self] in
            do throws(SystemError) {
                listenRegistration = try loop.register(fd: listener.fd, events: [.input, .exclusive], handler: self)
            } catch {
                // The other loops still accept; this one serves no connections.
                environment.logger.error(
                    "event loop \(loop.index) cannot watch the listening socket", [("error", error.description)])
            }
            tickTimer = loop.scheduleRepeating(every: 1_000_000_000) { [self] in
                let now = monotonicNow()
                for connection in Array(registry.all) { connection.tick(now: now) }
                return true
            }
        }
    }

    /// The listener is readable: accept what is waiting.
    func handleEvent(_ events: EpollEvents) {
        loop.assertInEventLoop()
        for _ in 0..<64 {
            guard accepting else { return }
            let fd = cshim_accept(listener.fd)
            if fd < 0 {
                if errno == EMFILE || errno == ENFILE {
                    environment.logger.warning("cannot accept: out of file descriptors")
                }
                return
            }
            guard counter.admit() else {
                environment.logger.warning("connection refused: the server already has \(counter.limit) connections")
                Glibc.close(fd)
                continue
            }
            _ = cshim_set_nodelay(fd)
            nextConnection += 1
            let connection = ServerConnection(
                id: UInt64(loop.index) << 48 | nextConnection, fd: fd, peer: Self.peerName(fd),
                loop: loop, owner: registry, environment: environment)
            registry.add(connection)
            connection.start()
        }
    }

    func beginDrain() {
        loop.execute { [self] in
            stopAccepting()
            for connection in Array(registry.all) { connection.beginDrain() }
        }
    }

    func forceEndStreams() {
        loop.execute { [self] in
            for connection in Array(registry.all) { connection.forceEndStreams() }
        }
    }

    func closeAll() {
        loop.execute { [self] in
            for connection in Array(registry.all) { connection.close() }
        }
    }

    func stop() {
        loop.execute { [self] in
            if let tickTimer { loop.cancel(tickTimer) }
            tickTimer = nil
            for connection in Array(registry.all) { connection.close() }
            stopAccepting()
        }
        loop.stopAndWait()
    }

    private func stopAccepting() {
        loop.assertInEventLoop()
        guard accepting else { return }
        accepting = false
        if let listenRegistration {
            do throws(SystemError) {
                try loop.deregister(fd: listener.fd, registration: listenRegistration)
            } catch {
                environment.logger.error(
                    "event loop \(loop.index) cannot stop watching the listening socket", [("error", error.description)]
                )
            }
            self.listenRegistration = nil
        }
        listener.release()
    }

    private static func peerName(_ fd: Int32) -> String {
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) == 0 }
        }
        guard ok else { return "unknown" }
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                getnameinfo(
                    $0, length, &host, socklen_t(host.count), &service, socklen_t(service.count),
                    NI_NUMERICHOST | NI_NUMERICSERV)
            }
        }
        guard status == 0 else { return "unknown" }
        func text(_ chars: [CChar]) -> String {
            String(decoding: chars.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return text(host) + ":" + text(service)
    }
}
