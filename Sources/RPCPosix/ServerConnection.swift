internal import CSystemShims
internal import Glibc
import ProtoBridge
import RPCCore
import Synchronization
import TLSSupport
import ThreadSupport

/// One accepted TCP connection: moves bytes between its socket and its `ServerSession`.
///
/// The I/O shell of the session: it hands the session every event (bytes read, completions,
/// timers, shutdown) and carries out the `TransportActions` each returns, and decides nothing
/// about the protocol itself. Reads go into the loop's shared scratch buffer; only the tail of an
/// incomplete frame is kept per connection, so an idle connection holds no buffer at all. Output
/// accumulates in the session during a loop turn and is written with one `write` at the end of
/// the turn.
///
/// Backpressure holds a peer to its allowance of unwritten output (`maxPendingOutputBytes`, less
/// when the memory budget is short): the session stops consuming frames as soon as its output
/// passes it, mid-buffer if need be — what it did not consume stays here as held-back input —
/// and the socket is not read until the output drains to half of it. What the connection holds
/// (unwritten output, partial input) is reserved in the memory budget (`MemoryAccount`), settled
/// at each flush and, when it grows by more than `MemoryBudget.smallHolding`, mid-turn.
///
/// On a TLS listener the bytes cross the socket through the connection's `TLSSession`
/// (`ConnectionIO`); the session above sees the same plaintext frames either way. The TLS
/// handshake comes first, before the preface, and counts toward the session's handshake timeout
/// (the session's clock starts at accept); each loop advances at most
/// `ConnectionRegistry.handshakeStepsPerTurn` handshakes per turn, so a flood of handshakes
/// (each a signature) delays its other connections by a bounded amount. What OpenSSL holds (at
/// most a record in each direction, released when idle) is not counted in the budget.
///
/// Invariant: used only on its loop's thread (each entry point asserts it in debug builds).
final class ServerConnection: EventHandler, Flushable, LoopConnection, PortTarget, SessionConnection {
    let id: UInt64
    let fd: Int32
    let session: ServerSession
    let port: ConnectionPort
    /// Plaintext, or the TLS session bytes go through.
    private let io: ConnectionIO
    unowned let loop: EventLoop
    private unowned let owner: ConnectionRegistry
    /// The epoll registration; nil until `start` registered the socket.
    private var registration: UInt32?
    /// Input not consumed yet: the tail of an incomplete frame, or frames held back by backpressure.
    private var partial: [UInt8] = []
    private var needed = 0
    private var written = 0
    /// Unwritten output passed the allowance: no frame is consumed and the socket is not read
    /// until the output drains to half of it.
    private var outputBlocked = false
    /// The budget is under pressure and the partial frame would have to grow: not read until the
    /// loop resumes it (`resumeInput`).
    private(set) var inputBlocked = false
    /// `partial` may hold whole frames the session did not consume because output was over the
    /// allowance: they are consumed before the socket is read again.
    private var heldBack = false
    /// This event's share of output is spent: no more is read or consumed until the next turn.
    private var yielded = false
    /// The session handed a large request to the large-request pool: no frame is consumed and the
    /// socket is not read until the pool has taken it in (`largeRequestTakenIn`).
    private var awaitingLargeRequest = false
    private var writingBlocked = false
    /// TLS: what the handshake waits for (nil once it completed, and always for plaintext).
    private var handshakeInterest: EpollEvents?
    /// TLS: the last read needs the socket writable first.
    private var readNeedsOutput = false
    /// TLS: the last write needs the socket readable first.
    private var writeNeedsInput = false
    private var isDirty = false
    /// The session asked to close once its output is written.
    private var closeWhenWritten = false
    private var registeredEvents: EpollEvents = []
    /// The one timer for the calls' deadlines, armed where the session asks.
    var deadlineTimer: TimerHandle?
    private var closed = false
    var isClosed: Bool { closed }
    /// What this connection holds, reserved in the memory budget.
    private var account: MemoryAccount
    /// Since when the connection has held anything (nil: nothing); among equal holdings the
    /// older holder is cut first.
    private(set) var holdingSince: UInt64?
    private let limits: ServerLimits
    private let observer: (any CallObserver)?
    private let logger: Logger
    /// Keeps failed TLS handshakes of one address to a few log lines, like failed HELLOs.
    private let throttle: AuthenticationThrottle?

    /// Reads when the budget is under pressure are this small, so that the tail of a frame a read
    /// leaves behind (which the connection must keep) stays small too.
    static let pressureReadSize = 4 * 1024

    init(
        id: UInt64, fd: Int32, io: ConnectionIO, peer: String, loop: EventLoop, owner: ConnectionRegistry,
        environment: ServerSession.Environment
    ) {
        self.id = id
        self.fd = fd
        self.io = io
        if io.session != nil { handshakeInterest = [.input, .readHangUp] }
        throttle = environment.authenticationThrottle
        self.loop = loop
        self.owner = owner
        limits = environment.limits
        observer = environment.observer
        logger = environment.logger
        account = MemoryAccount(budget: environment.memoryBudget)
        port = ConnectionPort(loop: loop)
        session = ServerSession(environment: environment, port: port, peer: peer)
    }

    /// True while the socket is read.
    private var reading: Bool {
        !closed && !closeWhenWritten && !outputBlocked && !inputBlocked && !awaitingLargeRequest
    }

    /// Bytes this connection holds (unwritten output and partial input), as reserved in the budget.
    var held: Int { account.held }

    func start() {
        loop.assertInEventLoop()
        observer?.connectionOpened()
        port.attach(self)
        registeredEvents = handshakeInterest ?? [.input, .readHangUp]
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
        if handshakeInterest != nil {
            continueHandshake()
            return
        }
        if events.contains(.output) {
            writingBlocked = false
            markDirty()
        }
        if !events.isDisjoint(with: [.input, .readHangUp]) && writeNeedsInput {
            writeNeedsInput = false
            writingBlocked = false
            markDirty()
        }
        if readNeedsOutput {
            guard events.contains(.output) else { return }
            readNeedsOutput = false
            if reading { readAvailable() }
        } else if !events.isDisjoint(with: [.input, .readHangUp]) && reading {
            readAvailable()
        }
    }

    /// Reads what the socket holds, up to four reads a turn. The registration is level-triggered,
    /// so a read that did not fill its buffer ends the turn: the socket is drained for now, and
    /// anything that arrives later is reported by the next `epoll_wait` (this saves the read that
    /// would only return `EAGAIN`, one system call per request at one call in flight). Frames held
    /// back by backpressure, or by the last event's share of output (`outputPerEvent`), are
    /// consumed first; nothing is read once this event's share is spent.
    ///
    /// Over TLS a read returns at most one record (16 KiB) and OpenSSL reads ahead what the
    /// socket holds: a short read ends the turn only when OpenSSL holds nothing more (what is
    /// still in the socket, `epoll` reports); else reads go on, up to sixteen a turn, and input
    /// left inside OpenSSL then (where `epoll` cannot see it) comes back next turn on a timer due
    /// at once.
    private func readAvailable() {
        if heldBack && !yielded { consumeHeldBack() }
        let isTLS = io.session != nil
        for _ in 0..<(isTLS ? 16 : 4) {
            guard reading, !yielded else { return }
            let outcome: ConnectionIO.Outcome
            let asked: Int
            if partial.isEmpty {
                asked =
                    account.budget.isUnderPressure
                    ? min(Self.pressureReadSize, owner.scratch.readBufferSize) : owner.scratch.readBufferSize
                outcome = owner.scratch.withReadBuffer { buffer in
                    let outcome = io.read(into: buffer.baseAddress!, count: asked)
                    if case .bytes(let n) = outcome {
                        _ = consume(UnsafeRawBufferPointer(rebasing: buffer[0..<n]), keepingRest: true)
                    }
                    return outcome
                }
            } else {
                // Room for the rest of the frame, but at most 64 KiB past what has arrived: a peer
                // that announces a large frame must send it before the server holds it.
                let want = min(max(needed, partial.count + 16 * 1024), partial.count + 64 * 1024)
                let start = partial.count
                // Growth doubles (a frame is not copied whole per read) but stops at the frame's end.
                let capacity =
                    want <= partial.capacity
                    ? partial.capacity : max(want, min(2 * partial.capacity, max(needed, want)))
                if account.budget.isUnderPressure && capacity > partial.capacity
                    && account.held + capacity - partial.capacity > MemoryBudget.smallHolding
                {
                    // The budget is short: the partial frame does not grow until the loop says so.
                    inputBlocked = true
                    owner.inputBlocked(self)
                    updateInterest(pending: session.outbound.count - written)
                    return
                }
                asked = want - start
                if capacity > partial.capacity { partial.reserveCapacity(capacity) }
                partial.appendZeros(want - start)
                outcome = partial.withUnsafeMutableBytes { io.read(into: $0.baseAddress! + start, count: want - start) }
                var n = 0
                if case .bytes(let count) = outcome { n = count }
                partial.removeLast(want - start - n)
                if n > 0 {
                    let consumed = partial.withUnsafeBytes { bytes in consume(bytes, keepingRest: false) }
                    partial.removeFirst(consumed)
                }
                settleInbound()
            }
            switch outcome {
            case .bytes(let n):
                observer?.transferred(received: n, sent: 0)
                if n < asked && !(io.session?.hasBufferedInput ?? false) { return }
            case .wouldBlock:
                return
            case .needsOtherDirection:
                readNeedsOutput = true
                updateInterest(pending: session.outbound.count - written)
                return
            case .closed, .failed:
                close()
                return
            }
        }
        if let tls = io.session, tls.hasBufferedInput {
            loop.scheduleNextTurn { [weak self] in self?.readBufferedInput() }
        }
    }

    /// Input left inside OpenSSL at the end of a turn's reads.
    private func readBufferedInput() {
        loop.assertInEventLoop()
        guard reading, handshakeInterest == nil, !readNeedsOutput else { return }
        readAvailable()
    }

    // MARK: TLS handshake

    /// Advances the TLS handshake (within the loop's share of handshake work this turn); once it
    /// completes, the connection reads like any other. A failure is logged (throttled per address,
    /// like failed HELLOs) and closes the connection.
    private func continueHandshake() {
        guard let tls = io.session else { return }
        if tls.bytesReceived == 0 && refusedPlaintextPeer() { return }
        // Over this turn's share, the connection waits: its registration is level-triggered, so
        // the next turn reports it again.
        guard owner.takeHandshakeStep(turn: loop.turn) else { return }
        switch tls.handshake() {
        case .complete:
            handshakeInterest = nil
            logger.debug(
                "TLS handshake complete",
                [
                    ("peer", session.peer), ("version", tls.protocolVersion), ("cipher", tls.cipherSuite),
                    ("alpn", tls.applicationProtocol ?? "-"), ("client_certificate", tls.peerSubject ?? "-"),
                ])
            updateInterest(pending: 0)
            // The client's first frames may have come with its last handshake message.
            if reading { readAvailable() }
        case .wantRead:
            setHandshakeInterest([.input, .readHangUp])
        case .wantWrite:
            setHandshakeInterest([.output])
        case .failed(let error):
            handshakeFailed(error, tls: tls)
        }
    }

    private func setHandshakeInterest(_ events: EpollEvents) {
        handshakeInterest = events
        guard let registration, events != registeredEvents else { return }
        do throws(SystemError) {
            try loop.modify(fd: fd, registration: registration, events: events)
            registeredEvents = events
        } catch {
            logger.warning(
                "closing connection: cannot change what its socket is watched for",
                [("peer", session.peer), ("error", error.description)])
            close()
        }
    }

    private func handshakeFailed(_ error: TLSError, tls: TLSSession) {
        if tls.bytesReceived == 0 {
            // Connected and went without a byte: a port check, not a TLS client.
            logger.debug("connection closed before a TLS handshake began", [("peer", session.peer)])
        } else {
            let logged = throttle?.failed(address: peerAddress, now: loop.now) ?? true
            observer?.transportEvent(.transportHandshakeFailed(logged: logged))
            if logged { logger.notice("closing connection: \(error.message)", [("peer", session.peer)]) }
        }
        close()
    }

    /// A plaintext MRPC client on the TLS listener (its first bytes are the preface, not a TLS
    /// record): it gets a GOAWAY it can read, saying why, instead of a TLS alert it cannot, and
    /// the connection closes. Costs one peek per TLS connection, before OpenSSL reads anything.
    private func refusedPlaintextPeer() -> Bool {
        var first: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
        let n = withUnsafeMutableBytes(of: &first) { recv(fd, $0.baseAddress, 4, Int32(MSG_PEEK)) }
        guard n == 4, first == (Preface.bytes[0], Preface.bytes[1], Preface.bytes[2], Preface.bytes[3]) else {
            return false
        }
        var frame: [UInt8] = []
        FrameWriter.goaway(
            lastStreamID: 0,
            error: .protocolViolation(
                "this listener speaks TLS only: connect with TLS (rpc-probe --tls, the Python client's tls=True)"),
            into: &frame)
        // A fresh socket's send buffer always takes a few dozen bytes.
        _ = frame.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        let logged = throttle?.failed(address: peerAddress, now: loop.now) ?? true
        observer?.transportEvent(.transportHandshakeFailed(logged: logged))
        if logged {
            logger.notice("closing connection: a plaintext client on the TLS listener", [("peer", session.peer)])
        }
        close()
        return true
    }

    /// The peer's address without its port, as failed handshakes are counted.
    private var peerAddress: String {
        let peer = session.peer
        guard let colon = peer.lastIndex(of: ":") else { return peer }
        return String(peer[..<colon])
    }

    /// Output one event of a connection may produce before the rest of its input waits for the
    /// next loop turn (plus the reply of the frame that passes it). Pipelined calls with large
    /// replies — compressed Echo calls that inflate to 4 MiB, reflection — made up to the 8 MiB
    /// allowance of output per event, ~95 ms each, and one turn over forty such connections held
    /// a fresh connection for seconds.
    static let outputPerEvent = 1 << 20
    /// Frames one event of a connection consumes before the rest waits for the next loop turn:
    /// what bounds an event of many small calls with costly replies (reflection). Above the
    /// calls a client usually keeps in flight, so an ordinary pipeline never waits.
    static let framesPerEvent = 128

    /// Feeds `bytes` to the session, which stops once the output passes the allowance, or this
    /// event's share of it (`outputPerEvent`). With `keepingRest`, what it did not consume is
    /// copied into `partial`. Returns the bytes consumed.
    private func consume(_ bytes: UnsafeRawBufferPointer, keepingRest: Bool) -> Int {
        let limit =
            written
            + account.budget.outputAllowance(
                holding: account.held, perConnection: limits.maxPendingOutputBytes, sharers: owner.loops)
        let share = session.outbound.count + Self.outputPerEvent
        let (consumed, next, actions) = session.receive(
            bytes, outboundLimit: min(limit, share), frameLimit: Self.framesPerEvent)
        needed = next
        if keepingRest && consumed < bytes.count {
            partial.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[consumed...]))
            settleInbound()
        }
        if session.awaitsLargeRequest && !session.closeRequested {
            // The rest waits in `partial` until the large-request pool has taken the request in.
            awaitingLargeRequest = true
            heldBack = consumed < bytes.count
        } else if session.outbound.count > limit && !session.closeRequested {
            // Backpressure mid-batch: the rest waits in `partial` until the output drains.
            outputBlocked = true
            heldBack = consumed < bytes.count
        } else if next == 0 && consumed < bytes.count && !session.closeRequested {
            // This event's share of output or frames is spent: the rest waits in `partial` for
            // the next turn.
            heldBack = true
            yield()
        }
        carryOut(actions)
        // Output that grew by more than a small holding is reserved now, not at the flush: the
        // next connection this turn (on any loop) sees the budget as it is.
        if session.outbound.count - written - account.outbound > MemoryBudget.smallHolding {
            account.settle(outbound: session.outbound.count - written)
            noteHolding()
        }
        return consumed
    }

    /// Ends this event's reading and comes back to the held-back input in the loop's next turn
    /// (due at once: after the events already waiting). Input still in the socket is reported
    /// again by the level-triggered registration meanwhile; `readAvailable` takes what is held
    /// back first either way, so frames keep their order.
    private func yield() {
        guard !yielded else { return }
        yielded = true
        resumeNextTurn()
    }

    private func resumeNextTurn() {
        loop.scheduleNextTurn { [weak self] in
            guard let self else { return }
            // Resumes run together in the timer's event: past the turn's budget, wait one more.
            guard !loop.turnOverBudget else { return resumeNextTurn() }
            yielded = false
            if reading { readAvailable() }
        }
    }

    /// Consumes the frames backpressure held back in `partial`.
    private func consumeHeldBack() {
        heldBack = false
        let consumed = partial.withUnsafeBytes { bytes in consume(bytes, keepingRest: false) }
        partial.removeFirst(consumed)
        settleInbound()
    }

    /// Frees an emptied input buffer and settles what the partial input holds with the budget.
    private func settleInbound() {
        if partial.isEmpty && partial.capacity > 0 { partial = [] }
        guard partial.capacity != account.inbound else { return }
        account.settle(inbound: partial.capacity)
        noteHolding()
    }

    /// Keeps the loop's list of holders (the candidates for a cut) and tells it when the budget is
    /// under pressure.
    private func noteHolding() {
        let holds = account.held > 0
        if holds != (holdingSince != nil) {
            holdingSince = holds ? loop.now : nil
            owner.setHolding(self, holds)
        }
        if holds && account.budget.isUnderPressure { owner.budgetUnderPressure() }
    }

    /// Does what the session asked for after an event.
    func carryOut(_ actions: ServerSession.TransportActions) {
        if actions.close {
            closeWhenWritten = true
        } else if let timer = actions.armDeadlineTimer {
            armDeadlineTimer(at: timer.deadline)
        }
        if actions.write || actions.close { markDirty() }
    }

    /// The large-request pool has taken in the session's large request: the connection reads
    /// again, the frames held back meanwhile first (in the loop's next turn, like a yield).
    func largeRequestTakenIn() {
        loop.assertInEventLoop()
        guard !closed else { return }
        carryOut(session.largeRequestTakenIn())
        guard awaitingLargeRequest else { return }
        awaitingLargeRequest = false
        updateInterest(pending: session.outbound.count - written)
        if heldBack { yield() }
    }

    /// The budget has room again: a connection whose partial frame was not allowed to grow is
    /// read again.
    func resumeInput() {
        loop.assertInEventLoop()
        guard inputBlocked, !closed else { return }
        inputBlocked = false
        updateInterest(pending: session.outbound.count - written)
    }

    /// Closes at once a connection that holds the most while the memory budget is under pressure:
    /// its unwritten output is dropped (a GOAWAY could only go behind it, to a peer that does not
    /// read) and its calls end as on any close.
    func cut() {
        loop.assertInEventLoop()
        guard !closed else { return }
        observer?.transportEvent(.connectionCut(.memoryBudget))
        logger.notice(
            "closing connection: the memory budget is spent and it holds the most",
            [
                ("peer", session.peer), ("app", session.authenticatedApp),
                ("unwritten_bytes", String(session.outbound.count - written)),
                ("partial_input_bytes", String(partial.count)),
            ])
        close()
    }

    // MARK: Writing

    private func markDirty() {
        guard !isDirty, !closed else { return }
        isDirty = true
        loop.markDirty(self)
    }

    /// Its session, whose output `flush` writes.
    func prefetchReached() {
        MemoryHint.prefetch(session, lines: 2)
    }

    func flush() {
        loop.assertInEventLoop()
        isDirty = false
        guard !closed else { return }
        if handshakeInterest != nil {
            // Nothing is written before the TLS handshake completes; a session that gives up on
            // the connection before then (the handshake timeout, a drain) closes it at once.
            if closeWhenWritten { close() }
            return
        }
        if !writingBlocked && written < session.outbound.count {
            let total = session.outbound.count
            writing: while written < total {
                let outcome = session.outbound.withUnsafeBytes { bytes in
                    io.send(from: bytes.baseAddress! + written, count: total - written)
                }
                switch outcome {
                case .bytes(let n):
                    written += n
                    observer?.transferred(received: 0, sent: n)
                case .wouldBlock:
                    writingBlocked = true
                    break writing
                case .needsOtherDirection:
                    writingBlocked = true
                    writeNeedsInput = true
                    break writing
                case .closed, .failed:
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
        if pending != account.outbound {
            account.settle(outbound: pending)
            noteHolding()
        }
        updateInterest(pending: pending)
    }

    private func updateInterest(pending: Int) {
        guard let registration, !closed else { return }
        let wasReading = reading
        if !closeWhenWritten {
            let allowance = account.budget.outputAllowance(
                holding: account.held, perConnection: limits.maxPendingOutputBytes, sharers: owner.loops)
            if pending > allowance {
                outputBlocked = true
            } else if pending <= allowance / 2 {
                outputBlocked = false
            }
        }
        // Read hang-up only while reading: it is level-triggered, so a half-closed peer that is
        // not being read from would wake the loop on every turn. EPOLLHUP/EPOLLERR still come.
        // A read waiting for the socket to be writable does not watch input meanwhile (it would
        // wake the loop for nothing on every turn).
        var events: EpollEvents = reading && !readNeedsOutput ? [.input, .readHangUp] : []
        if pending > 0 || readNeedsOutput { events.insert(.output) }
        if writeNeedsInput { events.insert(.input) }
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
        // close_notify, so a TLS peer can tell the end from a cut (nothing waits for its answer).
        io.session?.shutdown()
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
        if session.hasCallsToEnd { owner.endCallsLater(of: session, on: loop) }
        // What it held goes back to the budget now; the buffers go with the connection.
        account.releaseAll()
        session.outbound = []
        partial = []
        if holdingSince != nil {
            holdingSince = nil
            owner.setHolding(self, false)
        }
        owner.remove(self)
    }
}

/// What a loop does with each of its connections, of either listener (our protocol's
/// `ServerConnection`, gRPC's `GRPCConnection`): timers, shutdown, and the memory budget's cuts.
protocol LoopConnection: AnyObject {
    var id: UInt64 { get }
    /// Bytes it holds (unwritten output, partial input), as reserved in the budget.
    var held: Int { get }
    /// Since when it has held anything (nil: nothing); among equal holdings the older is cut first.
    var holdingSince: UInt64? { get }
    /// The once-a-second check of its timers.
    func tick(now: UInt64)
    func beginDrain()
    func forceEndStreams()
    func close()
    /// Closed at once because the budget is spent and it holds the most.
    func cut()
    /// The budget has room again: a connection that waited for it reads again.
    func resumeInput()
}

/// A closed connection's session whose calls end a slice per loop turn.
protocol ClosingSession: AnyObject {
    var hasCallsToEnd: Bool { get }
    @discardableResult func endClosedCalls(limit: Int) -> Int
}

extension ServerSession: ClosingSession {}

/// The loop's connections by id, the scratch buffer they read into, and what the memory budget
/// needs of them: which hold anything (the candidates for a cut), which wait for room to read.
final class ConnectionRegistry {
    /// The server's event loops: the room under the budget's soft limit is granted in shares.
    let loops: Int
    private var connections: [UInt64: any LoopConnection] = [:]
    /// Connections holding unwritten output or partial input.
    private(set) var holders: [UInt64: any LoopConnection] = [:]
    /// Connections not read until the budget has room again.
    private var blockedInput: [UInt64: any LoopConnection] = [:]
    let scratch = ReadScratch(capacity: 64 * 1024)
    var onRemove: ((any LoopConnection) -> Void)?
    /// Called (at most once a turn, by the loop) when a connection sees the budget under pressure.
    var onPressure: (() -> Void)?
    /// TLS handshake steps a loop runs in one turn. A step that completes a ClientHello costs a
    /// key exchange and a signature (about 0.1 ms with an ECDSA key, 1 ms with RSA-2048), so a
    /// flood of handshakes holds up the loop's other connections by at most this many per turn.
    static let handshakeStepsPerTurn = 16
    private var handshakeTurn: UInt64 = 0
    private var handshakeSteps = 0

    init(loops: Int) {
        self.loops = loops
    }

    var count: Int { connections.count }
    var all: Dictionary<UInt64, any LoopConnection>.Values { connections.values }

    func add(_ connection: any LoopConnection) { connections[connection.id] = connection }
    func connection(_ id: UInt64) -> (any LoopConnection)? { connections[id] }
    func remove(_ connection: any LoopConnection) {
        connections[connection.id] = nil
        blockedInput[connection.id] = nil
        onRemove?(connection)
    }

    func setHolding(_ connection: any LoopConnection, _ holding: Bool) {
        holders[connection.id] = holding ? connection : nil
    }

    func inputBlocked(_ connection: any LoopConnection) { blockedInput[connection.id] = connection }

    /// True when a TLS handshake may take a step in loop turn `turn` (and counts it).
    func takeHandshakeStep(turn: UInt64) -> Bool {
        if turn != handshakeTurn {
            handshakeTurn = turn
            handshakeSteps = 0
        }
        guard handshakeSteps < Self.handshakeStepsPerTurn else { return false }
        handshakeSteps += 1
        return true
    }

    func budgetUnderPressure() { onPressure?() }

    /// Calls of closed connections a loop turn ends, all connections together: what a turn spends
    /// on connections that are gone stays bounded however many close at once (60 connections of
    /// 1 024 subscriptions each held a fresh connection's HELLO for a second in one turn).
    static let closedCallsEndedPerTurn = 256
    /// Sessions of closed connections with calls still to end, oldest first.
    private var closing: [any ClosingSession] = []

    /// Ends the rest of `session`'s calls over the next turns of `loop`.
    func endCallsLater(of session: any ClosingSession, on loop: EventLoop) {
        closing.append(session)
        if closing.count == 1 { scheduleClosedCalls(on: loop) }
    }

    /// Ends every call still to end now (the loop is stopping: no later turn).
    func endClosedCallsNow() {
        for session in closing { session.endClosedCalls(limit: .max) }
        closing.removeAll()
    }

    private func scheduleClosedCalls(on loop: EventLoop) {
        loop.scheduleNextTurn { [self] in
            var left = Self.closedCallsEndedPerTurn
            for session in closing where left > 0 { left -= session.endClosedCalls(limit: left) }
            closing.removeAll { !$0.hasCallsToEnd }
            if !closing.isEmpty { scheduleClosedCalls(on: loop) }
        }
    }

    /// The connections waiting for room to read, emptied.
    func takeBlockedInput() -> [any LoopConnection] {
        defer { blockedInput.removeAll() }
        return Array(blockedInput.values)
    }

    var hasBlockedInput: Bool { !blockedInput.isEmpty }
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

/// What a connection's port hands completions to, on the connection's loop.
protocol PortTarget: AnyObject {
    /// `CallPort.writeOnLoop` for the connection: false when the call is no longer live.
    func deliverInline(streamID: UInt32, final: Bool, _ write: (inout [UInt8]) -> Void) -> Bool
    func deliver(streamID: UInt32, frame: [UInt8], final: Bool)
    /// A frame the port queued alone.
    func deliver(_ frame: OutgoingFrame)
    /// Frames the port queued, in order, in one go.
    func deliver(_ frames: [OutgoingFrame])
    func largeRequestTakenIn()
}

/// A connection's `CallPort`: brings completed frames back to the connection on its loop.
///
/// Frames from other threads wait in the port's queue, in order, and the loop takes them all at
/// once: a fan-out's messages to one connection's many streams cost one task on the loop, not
/// one each. Frames handed over on the loop go straight to the connection, after whatever the
/// queue still holds.
final class ConnectionPort: CallPort, LoopTask, @unchecked Sendable {
    // Invariant: `connection`, `detached` and `spare` are only touched on `loop`'s thread; `connection` is
    // never dereferenced once `detached` is set (which the connection does when it closes).
    private unowned let loop: EventLoop
    private unowned(unsafe) var connection: (any PortTarget)?
    private var detached = false
    private let inboxBytes = Atomic<Int>(0)
    private let outboundBytes = Atomic<Int>(0)
    private let queue = Mutex(Queue())
    /// The queue holds frames (read on the loop without its lock, to skip an empty one).
    private let queued = Atomic<Bool>(false)
    /// The queue's other storage, empty (loop only): see `runOnLoop`.
    private var spare: [OutgoingFrame] = []
    /// Where the queue's frame storage starts, for `prefetchQueue`: recorded at each hand-over,
    /// possibly stale (an append that grew the array moved it), never dereferenced.
    private let framesAddress = Atomic<UInt>(0)

    private struct Queue {
        /// The frame queued first, kept inline: a fan-out over one socket per subscriber queues
        /// one frame per port, and reaching the array's storage for it would be one more cache
        /// miss per delivery. Nil while the queue is empty.
        var first: OutgoingFrame?
        /// The frames queued after `first`.
        var frames: [OutgoingFrame] = []
        var bytes = 0
        /// A task to take the frames is in the loop's inbox.
        var scheduled = false
        /// `bytes` went over `LoopBacklog.threshold`, and the port counts in `LoopBacklog` until
        /// the loop takes the frames.
        var behind = false
    }

    /// The loop's thread, recorded by `attach` on it. A fan-out asks for every message whether
    /// it runs there, and asking the loop would load the unowned reference strongly: a retain
    /// and a release each time, and one more object's cache line.
    private let loopThread = Atomic<UInt>(0)

    init(loop: EventLoop) {
        self.loop = loop
    }

    /// Relaxed is enough: only the loop's thread can find its own id, and it wrote it.
    private var onLoopThread: Bool { loopThread.load(ordering: .relaxed) == UInt(pthread_self()) }

    deinit {
        if isBehind { LoopBacklog.caughtUp() }
    }

    /// Called once by the connection when it is set up (on the loop).
    func attach(_ connection: any PortTarget) {
        loop.assertInEventLoop()
        loopThread.store(UInt(pthread_self()), ordering: .relaxed)
        self.connection = connection
    }

    /// Called by the connection when it closes (on the loop).
    func detach() {
        loop.assertInEventLoop()
        detached = true
        connection = nil
    }

    var pendingBytes: Int { inboxBytes.load(ordering: .relaxed) + outboundBytes.load(ordering: .relaxed) }

    /// The queue for the loop holds more than `LoopBacklog.threshold` bytes (the port counts there).
    var isBehind: Bool { queue.withLock { $0.behind } }

    func publishOutbound(_ bytes: Int) { outboundBytes.store(bytes, ordering: .relaxed) }

    func writeOnLoop(streamID: UInt32, final: Bool, _ write: (inout [UInt8]) -> Void) -> Bool {
        guard onLoopThread else { return false }
        runOnLoop()
        guard !detached, let connection else { return true } // gone: nothing more to send
        return connection.deliverInline(streamID: streamID, final: final, write)
    }

    func largeRequestTakenIn() {
        if onLoopThread {
            if !detached { connection?.largeRequestTakenIn() }
            return
        }
        loop.execute { [self] in
            if !detached { connection?.largeRequestTakenIn() }
        }
    }

    func deliver(streamID: UInt32, frame: [UInt8], final: Bool) {
        if onLoopThread {
            runOnLoop()
            if !detached { connection?.deliver(streamID: streamID, frame: frame, final: final) }
            return
        }
        enqueue(.frame(streamID: streamID, bytes: frame, final: final))
    }

    func deliverMessage(streamID: UInt32, body: [UInt8]) {
        if onLoopThread {
            runOnLoop()
            if !detached { connection?.deliver([.message(streamID: streamID, body: body)]) }
            return
        }
        enqueue(.message(streamID: streamID, body: body))
    }

    private func enqueue(_ frame: OutgoingFrame) {
        let size = frame.wireSize
        inboxBytes.add(size, ordering: .relaxed)
        let (schedule, fellBehind) = queue.withLock { queue in
            if queue.first == nil {
                assert(queue.frames.isEmpty, "frames queued behind no first frame")
                queue.first = frame
            } else {
                queue.frames.append(frame)
            }
            queue.bytes += size
            let fellBehind = !queue.behind && queue.bytes > LoopBacklog.threshold
            if fellBehind { queue.behind = true }
            defer { queue.scheduled = true }
            return (!queue.scheduled, fellBehind)
        }
        if fellBehind { LoopBacklog.fellBehind() }
        queued.store(true, ordering: .releasing)
        if schedule { loop.execute(self) }
    }

    /// Its connection, which `runOnLoop` hands the frames to.
    func prefetchReached() {
        if !detached, let connection { MemoryHint.prefetch(connection, lines: 3) }
    }

    /// Hands the queued frames to the connection (on the loop).
    func runOnLoop() {
        guard queued.load(ordering: .acquiring) else { return }
        // The queue's storage and `spare` trade places at each hand-over, so neither side
        // allocates for the usual few frames a turn; a large one is not kept, so an idle port
        // holds little.
        var frames: [OutgoingFrame] = []
        swap(&frames, &spare)
        let (first, bytes, wasBehind) = queue.withLock { queue in
            queued.store(false, ordering: .releasing)
            swap(&frames, &queue.frames)
            framesAddress.store(Self.storageAddress(of: queue.frames), ordering: .relaxed)
            defer { queue = Queue(frames: queue.frames) }
            return (queue.first, queue.bytes, queue.behind)
        }
        if wasBehind { LoopBacklog.caughtUp() }
        inboxBytes.subtract(bytes, ordering: .relaxed)
        if !detached, let first { connection?.deliver(first) }
        if !detached, !frames.isEmpty { connection?.deliver(frames) }
        frames.removeAll(keepingCapacity: frames.capacity <= Self.framesKept)
        spare = frames
    }

    /// Frames of capacity a queue keeps between hand-overs (`runOnLoop`).
    static let framesKept = 32

    /// The next `enqueue` will most likely append to the frames array (over one socket per
    /// subscriber a port under load holds a few): its header and first elements, whose first
    /// touch was the largest stall left in a sustained fan-out's walk.
    func prefetchQueue() {
        let address = framesAddress.load(ordering: .relaxed)
        guard address > Self.arrayHeaderBytes, let start = UnsafeRawPointer(bitPattern: address - Self.arrayHeaderBytes)
        else { return }
        MemoryHint.prefetch(address: start, lines: 2)
    }

    /// An array's storage object before its elements: the object header, count and capacity.
    private static let arrayHeaderBytes: UInt = 32

    private static func storageAddress(of frames: [OutgoingFrame]) -> UInt {
        frames.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }
}
