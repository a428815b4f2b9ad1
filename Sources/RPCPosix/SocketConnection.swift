internal import CSystemShims
internal import Glibc
import ProtoBridge
import RPCCore
import TLSSupport

/// One accepted TCP connection, whichever wire it speaks: moves bytes between its socket and its
/// `ConnectionCore`.
///
/// The I/O shell of the core: it hands the core every event (bytes read, completions, timers,
/// shutdown) and carries out the `TransportActions` each returns, and decides nothing about the
/// protocol itself. Reads go into the loop's shared scratch buffer; only the tail of an
/// incomplete frame (or what backpressure held back) is kept per connection, so an idle
/// connection holds no buffer at all. Output accumulates in the core during a loop turn and is
/// written with one `send` at the end of the turn. Written once for both wires: TLS,
/// backpressure, the memory budget and teardown are the same for our protocol and for gRPC.
///
/// Backpressure holds a peer to its allowance of unwritten output (`maxPendingOutputBytes`, less
/// when the memory budget is short), counting what HTTP/2 holds for its streams as well as what
/// waits for the socket: the core stops decoding frames as soon as that passes the allowance,
/// mid-buffer if need be — what it did not consume stays here as held-back input — and the
/// socket is not read until the output drains to half of it. What the connection holds (unwritten
/// output, partial input, its calls' heads, a pending TLS handshake) is reserved in the memory
/// budget (`MemoryAccount`), settled at each flush and, when it grows by more than
/// `MemoryBudget.smallHolding`, mid-turn.
///
/// On a TLS listener the bytes cross the socket through the connection's `TLSSession`
/// (`ConnectionIO`); the core above sees the same plaintext either way, and ALPN may name its wire
/// before the first byte. The TLS handshake counts toward the core's handshake timeout (the
/// core's clock starts at accept); each loop advances at most
/// `ConnectionRegistry.handshakeStepsPerTurn` handshakes per turn.
///
/// Where its I/O stands is one value, `SocketIOState`, whose events return what to do.
///
/// Invariant: used only on its loop's thread (each entry point asserts it in debug builds).
final class SocketConnection: EventHandler, Flushable, LoopConnection, PortTarget {
    let id: UInt64
    let fd: Int32
    let core: ConnectionCore
    let port: ConnectionPort
    /// Plaintext, or the TLS session bytes go through.
    let io: ConnectionIO
    unowned let loop: EventLoop
    unowned let owner: ConnectionRegistry
    /// The epoll registration; nil until `start` registered the socket.
    var registration: UInt32?
    var registeredEvents: EpollEvents = []
    /// Where the connection's I/O stands: handshake, reading or held, writing or blocked,
    /// lingering, closed.
    var state: SocketIOState
    /// Input not consumed yet: the tail of an incomplete frame, or frames held back.
    var partial: [UInt8] = []
    /// Bytes the next frame needs in all, as the core last said.
    var needed = 0
    /// Bytes of the core's `outbound` already written.
    var written = 0
    var isDirty = false
    /// Something was written: a close lingers so that the last of it is not lost to a reset.
    var sentAny = false
    /// The one timer for the calls' deadlines, armed where the core asks.
    var deadlineTimer: TimerHandle?
    /// How long a closing connection drops its peer's input before it closes anyway.
    var lingerTimer: TimerHandle?
    /// What this connection holds, reserved in the memory budget.
    var account: MemoryAccount
    /// Since when the connection has held anything (nil: nothing); among equal holdings the
    /// older holder is cut first.
    private(set) var holdingSince: UInt64?
    let limits: ServerLimits
    let observer: (any CallObserver)?
    let logger: Logger
    /// Keeps failed TLS handshakes of one address to a few log lines, like failed HELLOs.
    let throttle: AuthenticationThrottle?

    init(
        id: UInt64, fd: Int32, io: ConnectionIO, peer: String, loop: EventLoop, owner: ConnectionRegistry,
        environment: ServerEnvironment
    ) {
        self.id = id
        self.fd = fd
        self.io = io
        state = SocketIOState(tls: io.session != nil)
        throttle = environment.authenticationThrottle
        self.loop = loop
        self.owner = owner
        limits = environment.limits
        observer = environment.observer
        logger = environment.logger
        account = MemoryAccount(budget: environment.memoryBudget)
        port = ConnectionPort(loop: loop)
        core = ConnectionCore(environment: environment, port: port, peer: peer)
    }

    var isClosed: Bool { state.isClosed }

    /// Bytes this connection holds, as reserved in the budget.
    var held: Int { account.held }

    /// The peer's address, "HOST:PORT".
    var peer: String { core.peer }

    func start() {
        loop.assertInEventLoop()
        observer?.connectionOpened()
        port.attach(self)
        if io.session != nil { account.settle(inbound: TLSSession.handshakeBytes) }
        registeredEvents = state.interest(pendingOutput: 0)
        do throws(SystemError) {
            registration = try loop.register(fd: fd, events: registeredEvents, handler: self)
        } catch {
            logger.warning(
                "closing connection: cannot watch its socket", [("peer", peer), ("error", error.description)])
            close()
        }
        noteHolding()
    }

    // MARK: Events

    func handleEvent(_ events: EpollEvents) {
        loop.assertInEventLoop()
        switch state.event(events) {
        case .close:
            close()
        case .continueHandshake:
            continueHandshake()
        case .dropInput:
            dropInput()
        case .handle(let flush, let read):
            if flush { markDirty() }
            if read { readAvailable() }
        }
    }

    /// Does what the core asked for after an event.
    func carryOut(_ actions: TransportActions) {
        if actions.close {
            state.closing()
        } else if let timer = actions.armDeadlineTimer {
            armDeadlineTimer(at: timer.deadline)
        }
        if actions.write || actions.close { markDirty() }
    }

    /// Moves the deadline timer to `deadline`, cancelling the one armed: the core asks only for a
    /// deadline earlier than the one armed, or for the next after the timer fired.
    private func armDeadlineTimer(at deadline: UInt64) {
        if let deadlineTimer { loop.cancel(deadlineTimer) }
        deadlineTimer = loop.schedule(at: deadline) { [unowned self] in
            deadlineTimer = nil
            carryOut(core.expireDeadlines(now: loop.now))
        }
    }

    // MARK: Response parts (from the port, on the loop)

    func replyInline(streamID: UInt32, _ write: MessageWriter) -> Bool {
        loop.assertInEventLoop()
        guard !state.isClosed else { return true }
        guard let actions = core.deliverInline(streamID: streamID, write) else { return false }
        carryOut(actions)
        return true
    }

    func deliver(streamID: UInt32, _ part: ResponsePart) {
        loop.assertInEventLoop()
        guard !state.isClosed else { return }
        carryOut(core.deliver(streamID: streamID, part))
    }

    func deliver(_ part: OutgoingPart) {
        deliver(streamID: part.streamID, part.part)
    }

    /// Takes a port's parts in slices of about `deliverySliceBytes`, each written (as far as the
    /// socket takes it) before the next is encoded: a fan-out can hand a connection megabytes at
    /// once, and encoded whole they would grow the output past the buffer a connection keeps
    /// between writes (256 KiB) — a fresh mapping, its page faults and a copy each time.
    func deliver(_ parts: [OutgoingPart]) {
        loop.assertInEventLoop()
        var start = parts.startIndex
        while start < parts.endIndex, !state.isClosed {
            var end = start
            var bytes = 0
            repeat {
                bytes += parts[end].wireSize
                end += 1
            } while end < parts.endIndex && bytes + parts[end].wireSize <= Self.deliverySliceBytes
            carryOut(core.deliver(parts[start..<end]))
            start = end
            if start < parts.endIndex, !state.isClosed { flush() }
        }
    }

    /// Bytes of a port's parts a connection encodes into its output before writing it.
    static let deliverySliceBytes = 128 * 1024

    /// The large-request pool has taken in the core's large request: the connection reads
    /// again, the frames held back meanwhile first (in the loop's next turn, like a yield).
    func largeRequestTakenIn() {
        loop.assertInEventLoop()
        guard !state.isClosed else { return }
        carryOut(core.largeRequestTakenIn())
        guard state.largeRequestTakenIn() else { return }
        updateInterest()
        if state.hasHeldBack { yield() }
    }

    // MARK: Loop events

    func tick(now: UInt64) {
        loop.assertInEventLoop()
        guard !state.isClosed else { return }
        carryOut(core.tick(now: now))
    }

    func beginDrain() {
        loop.assertInEventLoop()
        guard !state.isClosed else { return }
        carryOut(core.beginDrain())
    }

    func forceEndStreams() {
        loop.assertInEventLoop()
        guard !state.isClosed else { return }
        carryOut(core.forceEndStreams())
    }

    /// The budget has room again: a connection whose partial frame was not allowed to grow is
    /// read again.
    func resumeInput() {
        loop.assertInEventLoop()
        guard state.resumeInput() else { return }
        updateInterest()
    }

    /// Closes at once a connection that holds the most while the memory budget is under pressure:
    /// its unwritten output is dropped (a GOAWAY could only go behind it, to a peer that does not
    /// read) and its calls end as on any close.
    func cut() {
        loop.assertInEventLoop()
        guard !state.isClosed else { return }
        observer?.transportEvent(.connectionCut(.memoryBudget))
        logger.notice(
            "closing connection: the memory budget is spent and it holds the most",
            [
                ("peer", peer), ("wire", core.wire?.rawValue ?? "-"), ("app", core.authenticatedApp),
                ("unwritten_bytes", String(core.pendingOutput - written)),
                ("partial_input_bytes", String(partial.count)),
                ("held_bytes", String(account.held)),
            ])
        close()
    }

    // MARK: The memory budget

    /// Keeps the loop's list of holders (the candidates for a cut) and tells it when the budget is
    /// under pressure.
    func noteHolding() {
        let holds = account.held > 0
        if holds != (holdingSince != nil) {
            holdingSince = holds ? loop.now : nil
            owner.setHolding(self, holds)
        }
        if holds && account.budget.isUnderPressure { owner.budgetUnderPressure() }
    }

    /// Settles what the connection holds of its input side: the partial input buffer, its calls'
    /// heads and the wire's state, and a TLS handshake under way.
    func settleInbound() {
        if partial.isEmpty && partial.capacity > 0 { partial = [] }
        let inbound = partial.capacity + core.heldBytes + (state.isHandshaking ? TLSSession.handshakeBytes : 0)
        guard inbound != account.inbound else { return }
        account.settle(inbound: inbound)
        noteHolding()
    }

    /// The allowance of unwritten output now (less than the per-connection limit when the budget
    /// is short).
    var allowance: Int {
        account.budget.outputAllowance(
            holding: account.held, perConnection: limits.maxPendingOutputBytes, sharers: owner.loops)
    }

    // MARK: Closing

    func close() {
        loop.assertInEventLoop()
        guard !state.isClosed else { return }
        state.closed()
        if let deadlineTimer {
            loop.cancel(deadlineTimer)
            self.deadlineTimer = nil
        }
        if let lingerTimer {
            loop.cancel(lingerTimer)
            self.lingerTimer = nil
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
                    "cannot stop watching a connection's socket", [("peer", peer), ("error", error.description)])
            }
        }
        Glibc.close(fd)
        core.connectionClosed()
        if core.hasCallsToEnd { owner.endCallsLater(of: core, on: loop) }
        // What it held goes back to the budget now; the buffers go with the connection.
        account.releaseAll()
        core.outbound = []
        partial = []
        if holdingSince != nil {
            holdingSince = nil
            owner.setHolding(self, false)
        }
        owner.remove(self)
    }
}
