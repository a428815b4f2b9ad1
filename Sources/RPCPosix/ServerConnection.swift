internal import CSystemShims
internal import Glibc
import ProtoBridge
import RPCCore
import Synchronization

/// One accepted TCP connection: moves bytes between its socket and its `ServerSession`.
///
/// The I/O shell of the session: it hands the session every event (bytes read, completions,
/// timers, shutdown) and carries out the `TransportActions` each returns, and decides nothing
/// about the protocol itself. Reads go into the loop's shared scratch buffer; only the tail of an
/// incomplete frame is kept per connection, so an idle connection holds no buffer at all. Output
/// accumulates in the session during a loop turn and is written with one `write` at the end of
/// the turn. When the peer does not read and unwritten output passes the limit, the connection
/// stops reading until it drains (backpressure).
///
/// Invariant: used only on its loop's thread (each entry point asserts it in debug builds).
final class ServerConnection: EventHandler, Flushable {
    let id: UInt64
    let fd: Int32
    let session: ServerSession
    let port: ConnectionPort
    private unowned let loop: EventLoop
    private unowned let owner: ConnectionRegistry
    /// The epoll registration; nil until `start` registered the socket.
    private var registration: UInt32?
    private var partial: [UInt8] = []
    private var needed = 0
    private var written = 0
    private var reading = true
    private var writingBlocked = false
    private var isDirty = false
    /// The session asked to close once its output is written.
    private var closeWhenWritten = false
    private var registeredEvents: EpollEvents = []
    /// The one timer for the calls' deadlines, armed where the session asks.
    private var deadlineTimer: TimerHandle?
    private var closed = false
    private let limits: ServerLimits
    private let observer: (any CallObserver)?
    private let logger: Logger

    init(
        id: UInt64, fd: Int32, peer: String, loop: EventLoop, owner: ConnectionRegistry,
        environment: ServerSession.Environment
    ) {
        self.id = id
        self.fd = fd
        self.loop = loop
        self.owner = owner
        limits = environment.limits
        observer = environment.observer
        logger = environment.logger
        port = ConnectionPort(loop: loop)
        session = ServerSession(environment: environment, port: port, peer: peer)
    }

    func start() {
        loop.assertInEventLoop()
        observer?.connectionOpened()
        port.attach(self)
        registeredEvents = [.input, .readHangUp]
        do throws(SystemError) {
            registration = try loop.register(fd: fd, events: registeredEvents, handler: self)
        } catch {
            logger.warning(
                "closing connection: cannot watch its socket", [("peer", session.peer), ("error", error.description)])
            close()
        }
    }

    // MARK: Events

    func handleEvent(_ events: EpollEvents) {
        loop.assertInEventLoop()
        if !events.isDisjoint(with: [.error, .hangUp]) && !events.contains(.input) {
            close()
            return
        }
        if events.contains(.output) {
            writingBlocked = false
            markDirty()
        }
        if !events.isDisjoint(with: [.input, .readHangUp]) && reading {
            readAvailable()
        }
    }

    /// Reads what the socket holds, up to four reads a turn. The registration is level-triggered,
    /// so a read that did not fill its buffer ends the turn: the socket is drained for now, and
    /// anything that arrives later is reported by the next `epoll_wait` (this saves the read that
    /// would only return `EAGAIN`, one system call per request at one call in flight).
    private func readAvailable() {
        for _ in 0..<4 {
            guard !closed, reading else { return }
            let result: Int
            let asked: Int
            if partial.isEmpty {
                asked = owner.scratch.readBufferSize
                result = owner.scratch.withReadBuffer { buffer in
                    let n = read(fd, buffer.baseAddress, buffer.count)
                    if n > 0 { _ = consume(UnsafeRawBufferPointer(rebasing: buffer[0..<n]), keepingRest: true) }
                    return n
                }
            } else {
                // Room for the rest of the frame, but at most 64 KiB past what has arrived: a peer
                // that announces a large frame must send it before the server holds it.
                let want = min(max(needed, partial.count + 16 * 1024), partial.count + 64 * 1024)
                let start = partial.count
                asked = want - start
                partial.appendZeros(want - start)
                let n = partial.withUnsafeMutableBytes { read(fd, $0.baseAddress! + start, want - start) }
                partial.removeLast(want - start - max(n, 0))
                if n > 0 {
                    let consumed = partial.withUnsafeBytes { bytes in consume(bytes, keepingRest: false) }
                    partial.removeFirst(consumed)
                    if partial.isEmpty && partial.capacity > 64 * 1024 { partial = [] }
                }
                result = n
            }
            if result > 0 {
                observer?.transferred(received: result, sent: 0)
                if result < asked { return }
            }
            if result == 0 {
                close()
                return
            }
            if result < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK { return }
                if errno == EINTR { continue }
                close()
                return
            }
        }
    }

    /// Feeds `bytes` to the session. With `keepingRest`, an incomplete tail is copied into
    /// `partial`. Returns the bytes consumed.
    private func consume(_ bytes: UnsafeRawBufferPointer, keepingRest: Bool) -> Int {
        let (consumed, next, actions) = session.receive(bytes)
        needed = next
        if keepingRest && consumed < bytes.count {
            partial.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[consumed...]))
        }
        carryOut(actions)
        return consumed
    }

    /// Does what the session asked for after an event.
    private func carryOut(_ actions: ServerSession.TransportActions) {
        if actions.close {
            closeWhenWritten = true
            reading = false
        } else if let timer = actions.armDeadlineTimer {
            armDeadlineTimer(at: timer.deadline)
        }
        if actions.write || actions.close { markDirty() }
    }

    /// Moves the deadline timer to `deadline`, cancelling the one armed: the session asks only
    /// for a deadline earlier than the one armed, or for the next after the timer fired.
    private func armDeadlineTimer(at deadline: UInt64) {
        if let deadlineTimer { loop.cancel(deadlineTimer) }
        // Invariant: `close` cancels the timer, so it never fires for a closed connection.
        deadlineTimer = loop.schedule(at: deadline) { [unowned self] in
            self.deadlineTimer = nil
            self.carryOut(self.session.expireDeadlines(now: monotonicNow()))
        }
    }

    func deliverInline(streamID: UInt32, final: Bool, _ write: (inout [UInt8]) -> Void) -> Bool {
        loop.assertInEventLoop()
        guard !closed else { return true }
        guard let actions = session.deliverInline(streamID: streamID, final: final, write) else { return false }
        carryOut(actions)
        return true
    }

    func deliver(streamID: UInt32, frame: [UInt8], final: Bool) {
        loop.assertInEventLoop()
        guard !closed else { return }
        carryOut(session.deliver(streamID: streamID, frame: frame, final: final))
    }

    func tick(now: UInt64) {
        loop.assertInEventLoop()
        guard !closed else { return }
        carryOut(session.tick(now: now))
    }

    func beginDrain() {
        loop.assertInEventLoop()
        guard !closed else { return }
        carryOut(session.beginDrain())
    }

    func forceEndStreams() {
        loop.assertInEventLoop()
        guard !closed else { return }
        carryOut(session.forceEndStreams())
    }

    // MARK: Writing

    private func markDirty() {
        guard !isDirty, !closed else { return }
        isDirty = true
        loop.markDirty(self)
    }

    func flush() {
        loop.assertInEventLoop()
        isDirty = false
        guard !closed else { return }
        if !writingBlocked && written < session.outbound.count {
            let total = session.outbound.count
            while written < total {
                let n = session.outbound.withUnsafeBytes { bytes in
                    send(fd, bytes.baseAddress! + written, total - written, Int32(MSG_NOSIGNAL))
                }
                if n > 0 {
                    written += n
                    observer?.transferred(received: 0, sent: n)
                } else if n < 0 && errno == EINTR {
                    continue
                } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                    writingBlocked = true
                    break
                } else {
                    close()
                    return
                }
            }
            if written == total {
                session.outbound.removeAll(keepingCapacity: session.outbound.capacity <= 256 * 1024)
                written = 0
            } else if written > 1024 * 1024 {
                session.outbound.removeFirst(written)
                written = 0
            }
        }
        let pending = session.outbound.count - written
        port.publishOutbound(pending)
        if pending == 0 && closeWhenWritten {
            close()
            return
        }
        updateInterest(pending: pending)
    }

    private func updateInterest(pending: Int) {
        guard let registration else { return }
        let wasReading = reading
        if !closeWhenWritten {
            if pending > limits.maxPendingOutputBytes {
                reading = false
            } else if pending <= limits.maxPendingOutputBytes / 2 {
                reading = true
            }
        }
        // Read hang-up only while reading: it is level-triggered, so a half-closed peer that is
        // not being read from would wake the loop on every turn. EPOLLHUP/EPOLLERR still come.
        var events: EpollEvents = reading ? [.input, .readHangUp] : []
        if pending > 0 { events.insert(.output) }
        if events != registeredEvents {
            do throws(SystemError) {
                try loop.modify(fd: fd, registration: registration, events: events)
            } catch {
                logger.warning(
                    "closing connection: cannot change what its socket is watched for",
                    [("peer", session.peer), ("error", error.description)])
                close()
                return
            }
            registeredEvents = events
        }
        if reading && !wasReading { readAvailable() }
    }

    func close() {
        loop.assertInEventLoop()
        guard !closed else { return }
        closed = true
        if let deadlineTimer {
            loop.cancel(deadlineTimer)
            self.deadlineTimer = nil
        }
        observer?.connectionClosed()
        port.detach()
        if let registration {
            do throws(SystemError) {
                try loop.deregister(fd: fd, registration: registration)
            } catch {
                // Closing the fd below takes it out of the epoll set all the same.
                logger.warning(
                    "cannot stop watching a connection's socket",
                    [("peer", session.peer), ("error", error.description)])
            }
        }
        Glibc.close(fd)
        session.connectionClosed()
        owner.remove(self)
    }
}

/// The loop's connections by id, and the scratch buffer they read into.
final class ConnectionRegistry {
    private var connections: [UInt64: ServerConnection] = [:]
    let scratch = ReadScratch(capacity: 64 * 1024)
    var onRemove: ((ServerConnection) -> Void)?

    var count: Int { connections.count }
    var all: Dictionary<UInt64, ServerConnection>.Values { connections.values }

    func add(_ connection: ServerConnection) { connections[connection.id] = connection }
    func connection(_ id: UInt64) -> ServerConnection? { connections[id] }
    func remove(_ connection: ServerConnection) {
        connections[connection.id] = nil
        onRemove?(connection)
    }
}

/// A reusable read buffer, one per loop.
final class ReadScratch {
    private let buffer: UnsafeMutableRawBufferPointer

    init(capacity: Int) {
        buffer = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { buffer.deallocate() }

    var readBufferSize: Int { buffer.count }

    func withReadBuffer<R>(_ body: (UnsafeMutableRawBufferPointer) -> R) -> R { body(buffer) }
}

/// A connection's `CallPort`: brings completed frames back to the connection on its loop.
final class ConnectionPort: CallPort, @unchecked Sendable {
    // Invariant: `connection` and `detached` are only touched on `loop`'s thread; `connection` is
    // never dereferenced once `detached` is set (which the connection does when it closes).
    private unowned let loop: EventLoop
    private unowned(unsafe) var connection: ServerConnection?
    private var detached = false
    private let inboxBytes = Atomic<Int>(0)
    private let outboundBytes = Atomic<Int>(0)

    init(loop: EventLoop) {
        self.loop = loop
    }

    /// Called once by the connection when it is set up (on the loop).
    func attach(_ connection: ServerConnection) {
        loop.assertInEventLoop()
        self.connection = connection
    }

    /// Called by the connection when it closes (on the loop).
    func detach() {
        loop.assertInEventLoop()
        detached = true
        connection = nil
    }

    var pendingBytes: Int { inboxBytes.load(ordering: .relaxed) + outboundBytes.load(ordering: .relaxed) }

    func publishOutbound(_ bytes: Int) { outboundBytes.store(bytes, ordering: .relaxed) }

    func writeOnLoop(streamID: UInt32, final: Bool, _ write: (inout [UInt8]) -> Void) -> Bool {
        guard loop.inEventLoop else { return false }
        guard !detached, let connection else { return true } // gone: nothing more to send
        return connection.deliverInline(streamID: streamID, final: final, write)
    }

    func deliver(streamID: UInt32, frame: [UInt8], final: Bool) {
        if loop.inEventLoop {
            if !detached { connection?.deliver(streamID: streamID, frame: frame, final: final) }
            return
        }
        let size = frame.count
        inboxBytes.add(size, ordering: .relaxed)
        loop.execute { [self] in
            inboxBytes.subtract(size, ordering: .relaxed)
            if !detached { connection?.deliver(streamID: streamID, frame: frame, final: final) }
        }
    }
}
