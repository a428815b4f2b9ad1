internal import CSystemShims
internal import Glibc
import RPCCore
import Synchronization
import TLSSupport

/// One event loop of the server with its connections; it accepts from the server's listeners.
///
/// Every listener serves both wires (each connection's first bytes, or ALPN, say which), with
/// TLS or without as its own configuration says. Besides accepting, the loop keeps its
/// connections to the memory budget: when a connection sees the budget under pressure, the loop
/// cuts its connections that hold the most (`cutRound`), in step with the other loops through the
/// `HoldingBoard`, and reads again the connections whose partial frames waited for room. When
/// `accept` runs out of descriptors, the loop sheds the waiting connections with the listener's
/// reserve descriptor and stops watching the listeners for `acceptPauseNanoseconds`, so a
/// level-triggered listener cannot make it spin.
final class ServerLoop: Flushable, @unchecked Sendable {
    // Invariant: `registry`, `nextConnection`, `acceptors`, `accepting`, `tickTimer`,
    // `acceptPause` and `roundPending` are touched only on `loop`'s thread.

    /// What the loops of one server share.
    struct Shared: Sendable {
        let counter: ConnectionCounter
        let throttle: AuthenticationThrottle
        let holdings: HoldingBoard
        /// One warning line per interval when `accept` fails.
        let acceptFailures: LogSummary
        /// One warning line per interval when connections are refused for `maxConnections`.
        let refusals: LogSummary
        /// What every loop's timers run on.
        let clock: any ServerClock
    }

    /// One listening socket the loops share, and its TLS context (each connection starts with the
    /// current one; nil for plaintext).
    struct ServedListener: Sendable {
        let listener: Listener
        let tls: ReloadableTLSContext?
    }

    /// How long the listeners are not watched after `accept` ran out of descriptors.
    static let acceptPauseNanoseconds: UInt64 = 100_000_000
    /// Waiting connections shed at most per failed `accept`.
    static let shedLimit = 1_024

    /// Watches one listener for this loop.
    private final class Acceptor: EventHandler {
        unowned let owner: ServerLoop
        let served: ServedListener
        var registration: UInt32?

        init(owner: ServerLoop, served: ServedListener) {
            self.owner = owner
            self.served = served
        }

        func handleEvent(_ events: EpollEvents) { owner.accept(self) }
    }

    let loop: EventLoop
    let shared: Shared
    private let listeners: [ServedListener]
    private var acceptors: [Acceptor] = []
    private let environment: ServerEnvironment
    private let budget: MemoryBudget
    private let registry: ConnectionRegistry
    private var nextConnection: UInt64 = 0
    private var accepting = true
    /// Watching the listeners again after running out of descriptors.
    private var acceptPause: TimerHandle?
    /// The once-a-second check of every connection's handshake, idle and keepalive timers.
    private var tickTimer: TimerHandle?
    /// A cut round is asked for at the end of this turn.
    private var roundPending = false
    /// GOAWAY for a connection refused because the server is full, encoded once.
    private let serverFullFrame: [UInt8]
    /// GOAWAY for a connection shed because the process is out of descriptors.
    private let outOfDescriptorsFrame: [UInt8]

    init(index: Int, listeners: [ServedListener], environment: ServerEnvironment, shared: Shared) throws(SystemError) {
        loop = try EventLoop(index: index, clock: shared.clock)
        self.listeners = listeners
        self.environment = environment
        self.shared = shared
        budget = environment.memoryBudget
        registry = ConnectionRegistry(loops: shared.holdings.loops)
        serverFullFrame = Self.refusal(
            "the server already has its maximum of \(shared.counter.limit) connections; try again later")
        outOfDescriptorsFrame = Self.refusal("the server is out of file descriptors; try again later")
        registry.onRemove = { [counter = shared.counter] _ in counter.release() }
        registry.onPressure = { [unowned self] in
            guard !roundPending else { return }
            roundPending = true
            loop.markDirty(self)
        }
    }

    func start(cpu: Int32?) {
        loop.start(name: "loop-\(loop.index)", cpu: cpu)
        loop.execute { [self] in
            acceptors = listeners.map { Acceptor(owner: self, served: $0) }
            watchListeners()
            tickTimer = loop.scheduleRepeating(every: 1_000_000_000) { [self] in
                let now = loop.now
                for connection in Array(registry.all) { connection.tick(now: now) }
                if budget.isUnderPressure || registry.hasBlockedInput { cutRound() }
                if loop.index == 0 { reportThrottledHandshakes(now: now) }
                return true
            }
        }
    }

    private func watchListeners() {
        for acceptor in acceptors where acceptor.registration == nil {
            do throws(SystemError) {
                acceptor.registration = try loop.register(
                    fd: acceptor.served.listener.fd, events: [.input, .exclusive], handler: acceptor)
            } catch {
                // The other loops still accept; this one serves no connections from it.
                environment.logger.error(
                    "event loop \(loop.index) cannot watch a listening socket", [("error", error.description)])
            }
        }
    }

    /// A listener is readable: accept what is waiting.
    private func accept(_ acceptor: Acceptor) {
        loop.assertInEventLoop()
        let listener = acceptor.served.listener
        for _ in 0..<64 {
            guard accepting, acceptor.registration != nil else { return }
            let fd = cshim_accept(listener.fd)
            if fd < 0 {
                let error = errno
                if error == EMFILE || error == ENFILE || error == ENOBUFS || error == ENOMEM { acceptFailed(error) }
                return
            }
            guard shared.counter.admit() else {
                refuse(fd)
                continue
            }
            _ = cshim_set_nodelay(fd)
            var io = ConnectionIO.plain(fd)
            if let tls = acceptor.served.tls {
                // A handshake under way is counted in the budget: with no room for one more, the
                // connection is closed at once (a flood of handshakes that never finish cannot
                // hold more than the budget).
                guard !budget.isExhausted(adding: TLSSession.handshakeBytes) else {
                    Glibc.close(fd)
                    shared.counter.release()
                    environment.observer?.transportEvent(.connectionRefused(.memoryBudget))
                    continue
                }
                guard let session = tls.current.makeServerSession(fd: fd) else {
                    environment.logger.warning("closing connection: OpenSSL cannot make a TLS session (out of memory?)")
                    Glibc.close(fd)
                    shared.counter.release()
                    continue
                }
                io = .tls(session)
            }
            nextConnection += 1
            let connection = SocketConnection(
                id: UInt64(loop.index) << 48 | nextConnection, fd: fd, io: io, peer: Self.peerName(fd),
                loop: loop, owner: registry, environment: environment)
            registry.add(connection)
            connection.start()
        }
    }

    /// The server has its maximum of connections: GOAWAY and close, one warning per interval.
    private func refuse(_ fd: Int32) {
        _ = serverFullFrame.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        Glibc.close(fd)
        environment.observer?.transportEvent(.connectionRefused(.serverFull))
        if let count = shared.refusals.record(now: loop.now) {
            environment.logger.warning(
                "connections refused: the server has its maximum of connections",
                [("limit", String(shared.counter.limit)), ("refused_since_last_line", String(count))])
        }
    }

    /// `accept` failed for want of descriptors or kernel memory: shed what waits on every
    /// listener (a client of any port learns at once that the server is full), log once per
    /// interval, and stop watching the listeners for a moment (they stay readable, and would wake
    /// this loop at once, again and again).
    private func acceptFailed(_ error: Int32) {
        let failure: TransportEvent.AcceptFailure =
            switch error {
            case EMFILE: .processDescriptors
            case ENFILE: .systemDescriptors
            default: .kernelMemory
            }
        environment.observer?.transportEvent(.acceptFailed(failure))
        var shed = 0
        if error == EMFILE || error == ENFILE {
            for served in listeners {
                shed += served.listener.shedWaiting(goaway: outOfDescriptorsFrame, limit: Self.shedLimit)
            }
            for _ in 0..<shed { environment.observer?.transportEvent(.connectionRefused(.outOfDescriptors)) }
        }
        if let count = shared.acceptFailures.record(now: loop.now) {
            let reason =
                error == EMFILE ? "EMFILE" : error == ENFILE ? "ENFILE" : error == ENOBUFS ? "ENOBUFS" : "ENOMEM"
            environment.logger.warning(
                "cannot accept connections: \(String(cString: strerror(error))); waiting connections are closed "
                    + "and accepting pauses for \(Self.acceptPauseNanoseconds / 1_000_000) ms",
                [("errno", reason), ("failures_since_last_line", String(count)), ("shed_now", String(shed))])
        }
        pauseAccepting()
    }

    private func pauseAccepting() {
        guard accepting, acceptors.contains(where: { $0.registration != nil }) else { return }
        stopWatchingListeners()
        acceptPause = loop.schedule(at: loop.now + Self.acceptPauseNanoseconds) { [unowned self] in
            acceptPause = nil
            if accepting { watchListeners() }
        }
    }

    private func stopWatchingListeners() {
        for acceptor in acceptors {
            guard let registration = acceptor.registration else { continue }
            do throws(SystemError) {
                try loop.deregister(fd: acceptor.served.listener.fd, registration: registration)
            } catch {
                environment.logger.error(
                    "event loop \(loop.index) cannot stop watching a listening socket", [("error", error.description)])
            }
            acceptor.registration = nil
        }
    }

    // MARK: The memory budget

    /// End of a turn in which a connection saw the budget under pressure.
    func flush() {
        loop.assertInEventLoop()
        cutRound()
    }

    /// While the budget is under pressure, cuts this loop's connections holding the most (the
    /// oldest holding first among equals) until it is not, deferring to another loop whose
    /// largest holder is larger; once it is not, reads again the connections that waited.
    private func cutRound() {
        roundPending = false
        guard budget.isUnderPressure else {
            shared.holdings.publish(loop: loop.index, largest: 0)
            for connection in registry.takeBlockedInput() { connection.resumeInput() }
            return
        }
        // Every connection may hold a small holding whatever the budget says (a subscription's
        // head, a few small replies): only those holding more are cut.
        let candidates = registry.holders.values.filter { $0.held > MemoryBudget.smallHolding }.sorted {
            $0.held != $1.held ? $0.held > $1.held : ($0.holdingSince ?? 0) < ($1.holdingSince ?? 0)
        }
        var next = 0
        shared.holdings.publish(loop: loop.index, largest: candidates.first?.held ?? 0)
        while next < candidates.count, budget.isUnderPressure {
            // Another loop holds a larger one: it cuts that first (it sees the same pressure).
            guard candidates[next].held >= shared.holdings.largest(except: loop.index) else { break }
            candidates[next].cut()
            next += 1
        }
        shared.holdings.publish(loop: loop.index, largest: next < candidates.count ? candidates[next].held : 0)
        if !budget.isUnderPressure {
            for connection in registry.takeBlockedInput() { connection.resumeInput() }
        }
    }

    /// Logs what the authentication throttle kept out of the log (loop 0, once a second).
    private func reportThrottledHandshakes(now: UInt64) {
        let report = shared.throttle.summaries(now: now)
        guard !report.isEmpty else { return }
        for summary in report.addresses {
            environment.logger.notice(
                "failed handshakes not logged one by one",
                [("address", summary.address), ("count", String(summary.refused))])
        }
        if report.otherRefused > 0 {
            environment.logger.notice(
                "failed handshakes not logged one by one",
                [("other_addresses", String(report.otherAddresses)), ("count", String(report.otherRefused))])
        }
    }

    // MARK: Shutdown

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
            registry.endClosedCallsNow()
            stopAccepting()
        }
        loop.stopAndWait()
    }

    private func stopAccepting() {
        loop.assertInEventLoop()
        guard accepting else { return }
        accepting = false
        if let acceptPause {
            loop.cancel(acceptPause)
            self.acceptPause = nil
        }
        stopWatchingListeners()
        for served in listeners { served.listener.release() }
    }

    private static func refusal(_ message: String) -> [UInt8] {
        var frame: [UInt8] = []
        FrameWriter.goaway(
            lastStreamID: 0,
            error: RPCError(.tooManyConnections, message),
            into: &frame)
        return frame
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

/// The largest holding of each loop, so that a loop under budget pressure cuts its own largest
/// holder only when no other loop has a larger one: the cut falls on the server's largest
/// holders, not on each loop's. Touched only in cut rounds (under pressure), so a lock is fine.
final class HoldingBoard: Sendable {
    let loops: Int
    private let largest: Mutex<[Int]>

    init(loops: Int) {
        self.loops = loops
        largest = Mutex([Int](repeating: 0, count: loops))
    }

    func publish(loop: Int, largest bytes: Int) {
        largest.withLock { $0[loop] = bytes }
    }

    /// The largest holding any loop but `loop` reported.
    func largest(except loop: Int) -> Int {
        largest.withLock { values in
            var best = 0
            for (index, value) in values.enumerated() where index != loop { best = max(best, value) }
            return best
        }
    }
}
