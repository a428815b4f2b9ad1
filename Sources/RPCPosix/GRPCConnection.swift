internal import CSystemShims
internal import Glibc
import RPCCore
import RPCGRPC

extension GRPCSession: ClosingSession {}

/// One accepted connection of the gRPC listener: moves bytes between its socket and its
/// `GRPCSession` (HTTP/2, h2c with prior knowledge), on the same loop as our protocol's
/// connections and under the same rules: reads into the loop's scratch buffer, one write per loop
/// turn, and what it holds reserved in the memory budget.
///
/// Backpressure holds a peer to its allowance of unwritten output, counting what HTTP/2 holds
/// for its streams (a reader whose window is closed) as well as what waits for the socket: the
/// session is fed at most `sliceSize` bytes at a time and no more once the allowance is passed —
/// the rest of a read stays here as held-back input — and the socket is not read until the
/// output drains to half of it. HTTP/2's own output is taken from the session only while little
/// waits for the socket, so a peer that grants huge windows and never reads cannot make the
/// server copy everything it has queued into the output at once.
///
/// Invariant: used only on its loop's thread.
final class GRPCConnection: EventHandler, Flushable, LoopConnection, PortTarget, SessionConnection {
    let id: UInt64
    let fd: Int32
    let session: GRPCSession
    let port: ConnectionPort
    unowned let loop: EventLoop
    private unowned let owner: ConnectionRegistry
    private var registration: UInt32?
    private var registeredEvents: EpollEvents = []
    private var written = 0
    /// Input read but not fed to the session because the output passed the allowance.
    private var heldBack: [UInt8] = []
    private var outputBlocked = false
    private var writingBlocked = false
    private var isDirty = false
    private var closed = false
    var isClosed: Bool { closed }
    var deadlineTimer: TimerHandle?
    /// Closing: the write side is shut and what the peer still sends is read and dropped, so that
    /// closing with unread input (a kernel RST) cannot destroy the GOAWAY just written.
    private var lingering = false
    private var lingerTimer: TimerHandle?
    private var account: MemoryAccount
    private(set) var holdingSince: UInt64?
    private let limits: ServerLimits
    private let observer: (any CallObserver)?
    private let logger: Logger

    /// Input is fed to the session this much at a time, so backpressure is checked within a read.
    static let sliceSize = 16 * 1024
    /// HTTP/2 output is taken from the session while less than this waits for the socket.
    static let outputTakenBelow = 256 * 1024

    init(
        id: UInt64, fd: Int32, peer: String, loop: EventLoop, owner: ConnectionRegistry,
        environment: ServerSession.Environment, configuration: GRPCSession.Configuration
    ) {
        self.id = id
        self.fd = fd
        self.loop = loop
        self.owner = owner
        limits = environment.limits
        observer = environment.observer
        logger = environment.logger
        account = MemoryAccount(budget: environment.memoryBudget)
        port = ConnectionPort(loop: loop)
        session = GRPCSession(environment: environment, configuration: configuration, port: port, peer: peer)
    }

    private var reading: Bool { !closed && !session.closeRequested && !outputBlocked }

    var held: Int { account.held }

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
            return
        }
    }

    // MARK: Reading

    func handleEvent(_ events: EpollEvents) {
        loop.assertInEventLoop()
        if !events.isDisjoint(with: [.error, .hangUp]) && !events.contains(.input) {
            close()
            return
        }
        if lingering {
            dropInput()
            return
        }
        if events.contains(.output) {
            writingBlocked = false
            markDirty()
        }
        if !events.isDisjoint(with: [.input, .readHangUp]) && reading { readAvailable() }
    }

    /// Reads what the socket holds, up to four reads a turn (a short read ends the turn, as on
    /// our protocol's connections); held-back input is fed first.
    private func readAvailable() {
        if !heldBack.isEmpty {
            let rest = heldBack
            heldBack = []
            rest.withUnsafeBytes { feed($0) }
            settleInbound()
        }
        for _ in 0..<4 {
            guard reading, heldBack.isEmpty else { return }
            let size = owner.scratch.readBufferSize
            let count = owner.scratch.withReadBuffer { buffer -> Int in
                let n = recv(fd, buffer.baseAddress, size, 0)
                if n > 0 { feed(UnsafeRawBufferPointer(rebasing: buffer[0..<n])) }
                return n
            }
            if count > 0 {
                observer?.transferred(received: count, sent: 0)
                settleInbound()
                if count < size { return }
            } else if count == 0 {
                close()
                return
            } else {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return }
                close()
                return
            }
        }
    }

    /// How long a closing connection reads and drops its peer's input before it closes anyway.
    static let lingerNanoseconds: UInt64 = 1_000_000_000

    /// Closes after the session's last frames were written: the write side first (the peer reads
    /// the GOAWAY, then end of stream), then input is dropped until the peer closes or
    /// `lingerNanoseconds` pass.
    private func lingerThenClose() {
        guard !lingering, !closed, let registration else { return close() }
        lingering = true
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
        heldBack = []
        settleInbound()
        do throws(SystemError) {
            try loop.modify(fd: fd, registration: registration, events: [.input, .readHangUp])
            registeredEvents = [.input, .readHangUp]
        } catch {
            return close()
        }
        lingerTimer = loop.schedule(at: loop.now + Self.lingerNanoseconds) { [unowned self] in
            lingerTimer = nil
            close()
        }
    }

    /// Reads and drops what a closing connection's peer still sends; closes at its end.
    private func dropInput() {
        for _ in 0..<16 {
            let size = owner.scratch.readBufferSize
            let count = owner.scratch.withReadBuffer { recv(fd, $0.baseAddress, size, 0) }
            if count > 0 { continue }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return }
            close()
            return
        }
    }

    /// Feeds `bytes` to the session a slice at a time, keeping what follows the slice that took
    /// the output past the allowance.
    private func feed(_ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count {
            if closed { return }
            if outputHeld > allowance || session.closeRequested {
                if !session.closeRequested {
                    outputBlocked = true
                    heldBack.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[offset...]))
                }
                break
            }
            let end = min(bytes.count, offset + Self.sliceSize)
            carryOut(session.receive(UnsafeRawBufferPointer(rebasing: bytes[offset..<end])))
            offset = end
        }
        if outputBlocked { updateInterest() }
    }

    /// Output the peer has not taken: unwritten bytes and what HTTP/2 queues for its streams.
    private var outputHeld: Int { session.outbound.count - written + session.queuedBytes }

    private var allowance: Int {
        account.budget.outputAllowance(
            holding: account.held, perConnection: limits.maxPendingOutputBytes, sharers: owner.loops)
    }

    // MARK: Events from the session's calls

    func carryOut(_ actions: ServerSession.TransportActions) {
        if let timer = actions.armDeadlineTimer { armDeadlineTimer(at: timer.deadline) }
        if actions.write || actions.close { markDirty() }
    }

    /// The gRPC session takes no request to the large-request pool.
    func largeRequestTakenIn() {}

    /// Never waits for the budget to read: nghttp2 keeps an incomplete frame itself, and the
    /// session refuses the stream whose bytes pass its cap or arrive under pressure.
    func resumeInput() {}

    func cut() {
        loop.assertInEventLoop()
        guard !closed else { return }
        observer?.transportEvent(.connectionCut(.memoryBudget))
        logger.notice(
            "closing connection: the memory budget is spent and it holds the most",
            [("peer", session.peer), ("listener", "grpc"), ("held_bytes", String(account.held))])
        close()
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
        guard !closed, !lingering else { return }
        if session.outbound.count - written < Self.outputTakenBelow { session.takeOutput() }
        if !writingBlocked && written < session.outbound.count {
            let total = session.outbound.count
            while written < total {
                let n = session.outbound.withUnsafeBytes { bytes in
                    send(fd, bytes.baseAddress! + written, total - written, Int32(MSG_NOSIGNAL))
                }
                if n > 0 {
                    written += n
                    observer?.transferred(received: 0, sent: n)
                } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                    writingBlocked = true
                    break
                } else if n < 0 && errno == EINTR {
                    continue
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
        port.publishOutbound(outputHeld)
        if pending == 0 && session.closeRequested && !session.hasPendingOutput {
            lingerThenClose()
            return
        }
        if outputHeld != account.outbound {
            account.settle(outbound: outputHeld)
            noteHolding()
        }
        // More HTTP/2 output waits (it was not taken while the socket had plenty): next turn.
        if pending < Self.outputTakenBelow && session.hasPendingOutput && !writingBlocked { markDirty() }
        updateInterest()
    }

    private func updateInterest() {
        guard let registration, !closed, !lingering else { return }
        let wasReading = reading
        let pending = outputHeld
        let allowance = self.allowance
        if pending > allowance {
            outputBlocked = true
        } else if pending <= allowance / 2 {
            outputBlocked = false
        }
        var events: EpollEvents = reading ? [.input, .readHangUp] : []
        if session.outbound.count - written > 0 { events.insert(.output) }
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
        if reading && !wasReading && !heldBack.isEmpty {
            loop.scheduleNextTurn { [weak self] in
                guard let self, self.reading else { return }
                self.readAvailable()
            }
        }
    }

    private func settleInbound() {
        if heldBack.isEmpty && heldBack.capacity > 0 { heldBack = [] }
        guard heldBack.capacity != account.inbound else { return }
        account.settle(inbound: heldBack.capacity)
        noteHolding()
    }

    private func noteHolding() {
        let holds = account.held > 0
        if holds != (holdingSince != nil) {
            holdingSince = holds ? loop.now : nil
            owner.setHolding(self, holds)
        }
        if holds && account.budget.isUnderPressure { owner.budgetUnderPressure() }
    }

    func close() {
        loop.assertInEventLoop()
        guard !closed else { return }
        closed = true
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
        if let registration {
            do throws(SystemError) {
                try loop.deregister(fd: fd, registration: registration)
            } catch {
                logger.warning(
                    "cannot stop watching a connection's socket",
                    [("peer", session.peer), ("error", error.description)])
            }
        }
        Glibc.close(fd)
        session.connectionClosed()
        if session.hasCallsToEnd { owner.endCallsLater(of: session, on: loop) }
        account.releaseAll()
        session.outbound = []
        heldBack = []
        if holdingSince != nil {
            holdingSince = nil
            owner.setHolding(self, false)
        }
        owner.remove(self)
    }
}
