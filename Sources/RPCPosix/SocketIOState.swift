/// Where one connection's socket I/O stands, as one value whose events return what to do: the
/// I/O side of `SocketConnection`, as swift-nio's `BaseSocketChannel` keeps its lifecycle apart
/// from the syscalls.
///
/// The phases are an enum, each carrying only what holds in it: a TLS handshake waits for one
/// direction; an open connection reads unless something holds its reading back and writes
/// unless the socket (or TLS) blocks it; a lingering one only drops its peer's input; a closed
/// one does nothing. Reading may be held for several reasons at once (the output over its
/// allowance while a large request is off the loop, say), so those are a set: the socket is read
/// exactly when the set is empty. `SocketIOStateTests` checks the events as a table.
struct SocketIOState: Equatable {
    /// Why an open connection is not read now.
    struct ReadHolds: OptionSet, Equatable {
        let rawValue: UInt8

        /// The core asked to close once its output is written: nothing more is read.
        static let closing = ReadHolds(rawValue: 1 << 0)
        /// Unwritten output passed the allowance: read again once it drains to half.
        static let outputOverAllowance = ReadHolds(rawValue: 1 << 1)
        /// The memory budget is short and the partial frame would have to grow: read again when
        /// the loop says the budget has room (`resumeInput`).
        static let budgetShort = ReadHolds(rawValue: 1 << 2)
        /// A large request of the connection is taken in off the loop.
        static let largeRequest = ReadHolds(rawValue: 1 << 3)
        /// This event's share of the turn is spent: read again next turn.
        static let turnShareSpent = ReadHolds(rawValue: 1 << 4)
        /// TLS: the last read needs the socket writable first.
        static let tlsReadNeedsWritable = ReadHolds(rawValue: 1 << 5)
    }

    /// How the write side stands.
    enum Writing: Equatable {
        /// `send` may be tried.
        case ready
        /// The socket's buffer is full: wait for it to be writable.
        case blocked
        /// TLS: the last write needs the socket readable first.
        case blockedOnInput
    }

    enum Phase: Equatable {
        /// The TLS handshake is under way, waiting for the socket to be ready for `interest`.
        case handshaking(interest: EpollEvents)
        /// Bytes move.
        case open(reading: ReadHolds, writing: Writing)
        /// Closing: the write side is shut after the last output, and what the peer still sends
        /// is read and dropped (closing with unread input would make the kernel reset the
        /// connection, destroying the GOAWAY just written) until it closes or the linger ends.
        case lingering
        case closed
    }

    private(set) var phase: Phase
    /// The partial input holds whole frames the core did not consume (backpressure, the turn's
    /// share, a large request): they are consumed before the socket is read again.
    var hasHeldBack = false

    init(tls: Bool) {
        phase = tls ? .handshaking(interest: [.input, .readHangUp]) : .open(reading: [], writing: .ready)
    }

    // MARK: Queries

    var isClosed: Bool { phase == .closed }
    var isHandshaking: Bool {
        if case .handshaking = phase { return true }
        return false
    }
    var isLingering: Bool { phase == .lingering }

    /// True while the socket is read.
    var isReading: Bool {
        if case .open(let holds, _) = phase { return holds.isEmpty }
        return false
    }

    /// True while `send` may be tried.
    var canWrite: Bool {
        if case .open(_, .ready) = phase { return true }
        return false
    }

    /// True once the core asked to close after its output.
    var closeRequested: Bool {
        if case .open(let holds, _) = phase { return holds.contains(.closing) }
        return phase == .lingering || phase == .closed
    }

    /// The epoll events to watch for, given the unwritten output.
    func interest(pendingOutput: Int) -> EpollEvents {
        switch phase {
        case .handshaking(let interest):
            return interest
        case .open(let holds, let writing):
            // Read hang-up only while reading: it is level-triggered, so a half-closed peer that
            // is not read would wake the loop every turn (EPOLLHUP and EPOLLERR still come). A
            // read waiting for the socket to be writable watches no input meanwhile. A turn's
            // share spent keeps watching: the next turn resumes on its own timer, and input that
            // arrives after it must still wake the loop.
            var events: EpollEvents = holds.subtracting(.turnShareSpent).isEmpty ? [.input, .readHangUp] : []
            if pendingOutput > 0 || holds.contains(.tlsReadNeedsWritable) { events.insert(.output) }
            if writing == .blockedOnInput { events.insert(.input) }
            return events
        case .lingering:
            return [.input, .readHangUp]
        case .closed:
            return []
        }
    }

    // MARK: Events

    /// What to do about an epoll wake-up.
    enum EventAction: Equatable {
        case close
        case continueHandshake
        case dropInput
        /// Flush (the socket became writable, or a TLS write waited for input), read, or both.
        case handle(flush: Bool, read: Bool)
    }

    mutating func event(_ events: EpollEvents) -> EventAction {
        if !events.isDisjoint(with: [.error, .hangUp]) && !events.contains(.input) { return .close }
        switch phase {
        case .handshaking:
            return .continueHandshake
        case .lingering:
            return .dropInput
        case .closed:
            return .handle(flush: false, read: false)
        case .open(var holds, var writing):
            let readable = !events.isDisjoint(with: [.input, .readHangUp])
            var flush = false
            if events.contains(.output) && writing == .blocked {
                writing = .ready
                flush = true
            }
            if readable && writing == .blockedOnInput {
                writing = .ready
                flush = true
            }
            var read = readable
            if holds.contains(.tlsReadNeedsWritable) {
                guard events.contains(.output) else {
                    phase = .open(reading: holds, writing: writing)
                    return .handle(flush: flush, read: false)
                }
                holds.remove(.tlsReadNeedsWritable)
                read = true
            }
            phase = .open(reading: holds, writing: writing)
            return .handle(flush: flush || events.contains(.output), read: read && holds.isEmpty)
        }
    }

    /// The TLS handshake completed: bytes move.
    mutating func handshakeCompleted() {
        guard case .handshaking = phase else { return }
        phase = .open(reading: [], writing: .ready)
    }

    /// The TLS handshake waits for `interest`.
    mutating func handshakeWaits(for interest: EpollEvents) {
        guard case .handshaking = phase else { return }
        phase = .handshaking(interest: interest)
    }

    /// The core asked to close once its output is written.
    mutating func closing() {
        hold(.closing)
    }

    /// The unwritten output (and what the wire holds unsent) stands at `pending` against the
    /// allowance: reading stops past it and resumes at half of it.
    /// - Returns: true when reading resumed.
    mutating func outputStands(at pending: Int, allowance: Int) -> Bool {
        guard case .open(let holds, _) = phase, !holds.contains(.closing) else { return false }
        if pending > allowance {
            hold(.outputOverAllowance)
        } else if pending <= allowance / 2, holds.contains(.outputOverAllowance) {
            return release(.outputOverAllowance)
        }
        return false
    }

    /// The partial frame may not grow while the budget is short.
    mutating func budgetShort() { hold(.budgetShort) }

    /// The budget has room again. Returns true when the connection waited for it.
    mutating func resumeInput() -> Bool {
        guard case .open(let holds, _) = phase, holds.contains(.budgetShort) else { return false }
        _ = release(.budgetShort)
        return true
    }

    /// A large request of the connection went off the loop.
    mutating func largeRequestTaken() { hold(.largeRequest) }

    /// The large request was taken in. Returns true when the connection waited for it.
    mutating func largeRequestTakenIn() -> Bool {
        guard case .open(let holds, _) = phase, holds.contains(.largeRequest) else { return false }
        _ = release(.largeRequest)
        return true
    }

    /// This event's share of the turn is spent. Returns false when it already was.
    mutating func yielded() -> Bool {
        guard case .open(let holds, _) = phase, !holds.contains(.turnShareSpent) else { return false }
        hold(.turnShareSpent)
        return true
    }

    /// The next turn began for a connection that yielded.
    mutating func turnResumed() { _ = release(.turnShareSpent) }

    /// A TLS read needs the socket writable first.
    mutating func tlsReadNeedsWritable() { hold(.tlsReadNeedsWritable) }

    /// `send` would block: until writable, or (TLS) until readable.
    mutating func writeBlocked(needsInput: Bool) {
        guard case .open(let holds, _) = phase else { return }
        phase = .open(reading: holds, writing: needsInput ? .blockedOnInput : .blocked)
    }

    /// The output is written and the core asked to close: linger.
    mutating func startLinger() {
        guard !isClosed else { return }
        phase = .lingering
        hasHeldBack = false
    }

    mutating func closed() {
        phase = .closed
        hasHeldBack = false
    }

    private mutating func hold(_ reason: ReadHolds) {
        guard case .open(var holds, let writing) = phase else { return }
        holds.insert(reason)
        phase = .open(reading: holds, writing: writing)
    }

    /// Returns true when reading resumed (nothing else holds it).
    private mutating func release(_ reason: ReadHolds) -> Bool {
        guard case .open(var holds, let writing) = phase, holds.contains(reason) else { return false }
        holds.remove(reason)
        phase = .open(reading: holds, writing: writing)
        return holds.isEmpty
    }
}
