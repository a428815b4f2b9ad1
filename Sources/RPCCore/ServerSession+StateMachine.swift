extension ServerSession {
    /// The lifecycle of one connection as one value: handshake, open, draining, closing, closed.
    ///
    /// Each state carries only what holds in it, so the combinations that separate flags allowed
    /// cannot be written: a keepalive PING awaited before HELLO, a drain that goes on after the
    /// connection was told to close, a second GOAWAY after the closing one. Its methods are the
    /// events (preface, HELLO, frames, timer ticks, the last call ending, shutdown, the transport
    /// closing) and return what the session must do; it does no I/O and holds no calls, so every
    /// transition is tested as a table (`ServerSessionStateMachineTests`), as grpc-swift 2 and
    /// Hummingbird test their connection state machines.
    ///
    /// Invariant: `.draining` has calls in flight, and `.closing` and `.closed` have none. The
    /// session keeps it: every action that enters `.closing` or `.closed` ends the calls, and the
    /// drain ends (`.closing`) when the session reports its last call ended.
    struct StateMachine {
        enum State: Equatable {
            /// Connected; the preface has not arrived.
            case awaitingPreface
            /// The preface arrived; the next frame must be HELLO.
            case awaitingHello
            /// Authenticated: calls are accepted.
            case open(Open)
            /// GOAWAY sent: calls in flight finish and new ones are refused; closes after the last.
            case draining(Open)
            /// Nothing more is read; the connection closes once its output is written.
            case closing
            /// The transport closed the connection.
            case closed
        }

        /// What an authenticated connection keeps for its idle and keepalive timers.
        struct Open: Equatable {
            /// When the last frame arrived: a keepalive PING goes out after a quiet interval.
            var lastInbound: UInt64
            /// When the last call in flight ended: a connection is idle only from then on.
            var lastCallEnded: UInt64
            /// When the keepalive PING awaiting an answer was sent (any frame answers it).
            var pingSentAt: UInt64?
            /// When the frame the session is waiting to complete began to arrive (nil: none is
            /// incomplete): the rest must come within the frame timeout.
            var partialFrameSince: UInt64? = nil
        }

        /// Why the connection closes: the session logs by it.
        enum CloseReason: Equatable {
            /// The peer broke the protocol or was refused (bad preface, bad HELLO, oversized frame).
            case failure
            /// No call and no frame for the idle timeout.
            case idle
            /// Shutdown of a connection with nothing in flight.
            case shutdown
            /// Shutdown before the handshake ended: a peer that never said HELLO is just closed.
            case shutdownBeforeHello
            /// No HELLO within the handshake timeout.
            case handshakeTimeout
            /// No frame answered the keepalive PING in time.
            case keepaliveTimeout
            /// A frame began to arrive and its rest did not come within the frame timeout.
            case frameTimeout
            /// The drain ended: its last call completed, or the grace period cut its streams.
            case drained
            /// The transport closed the connection (the peer went, or the server cut it).
            case transportClosed
        }

        /// What the session does after an event.
        enum Action: Equatable {
            case none
            /// Send a keepalive PING carrying `token`.
            case sendPing(token: UInt64)
            /// Send GOAWAY with `error` and tell streams to end; calls in flight finish.
            case sendGoawayAndDrain(RPCError)
            /// Send GOAWAY with `error`, end every call in flight, close once written.
            case sendGoawayAndClose(RPCError, CloseReason)
            /// End every call in flight and close once the output is written, with no GOAWAY.
            case close(CloseReason)
        }

        private(set) var state: State
        private let openedAt: UInt64
        private let limits: ServerLimits

        init(openedAt: UInt64, limits: ServerLimits, state: State = .awaitingPreface) {
            self.openedAt = openedAt
            self.limits = limits
            self.state = state
        }

        // MARK: Queries

        /// True while frames are read: the handshake, open and draining states.
        var isReading: Bool {
            switch state {
            case .awaitingPreface, .awaitingHello, .open, .draining: true
            case .closing, .closed: false
            }
        }

        /// True once the connection should close (or has).
        var closeRequested: Bool {
            switch state {
            case .closing, .closed: true
            case .awaitingPreface, .awaitingHello, .open, .draining: false
            }
        }

        /// True while new calls are refused and those in flight finish.
        var isDraining: Bool {
            if case .draining = state { return true }
            return false
        }

        // MARK: Events

        /// The preface arrived and is valid.
        mutating func prefaceReceived() {
            guard case .awaitingPreface = state else { return }
            state = .awaitingHello
        }

        /// The HELLO authenticated the connection at `now`.
        mutating func helloAccepted(at now: UInt64) {
            guard case .awaitingHello = state else { return }
            state = .open(Open(lastInbound: now, lastCallEnded: openedAt, pingSentAt: nil))
        }

        /// A whole frame arrived at `now`: the peer is alive, whatever the frame, and no frame is
        /// partial until `inputLeft` says so.
        mutating func frameReceived(at now: UInt64) {
            switch state {
            case .open(var open):
                open.lastInbound = now
                open.pingSentAt = nil
                open.partialFrameSince = nil
                state = .open(open)
            case .draining(var open):
                open.lastInbound = now
                open.pingSentAt = nil
                open.partialFrameSince = nil
                state = .draining(open)
            case .awaitingPreface, .awaitingHello, .closing, .closed:
                break
            }
        }

        /// After the bytes received so far: `incomplete` when they end in part of a frame, which
        /// then has the frame timeout to complete from `now` (or from when it began, if it began
        /// before); false when nothing waits (every byte consumed, or the transport holds the rest
        /// back itself). Only an open or draining connection keeps the time; before HELLO the
        /// handshake timeout bounds a partial frame.
        mutating func inputLeft(incomplete: Bool, at now: UInt64) {
            switch state {
            case .open(var open):
                guard (open.partialFrameSince != nil) != incomplete else { return }
                open.partialFrameSince = incomplete ? now : nil
                state = .open(open)
            case .draining(var open):
                guard (open.partialFrameSince != nil) != incomplete else { return }
                open.partialFrameSince = incomplete ? now : nil
                state = .draining(open)
            case .awaitingPreface, .awaitingHello, .closing, .closed:
                break
            }
        }

        /// The peer broke the protocol or was refused: GOAWAY with `error`, then close.
        mutating func failed(_ error: RPCError) -> Action {
            guard !closeRequested else { return .none }
            state = .closing
            return .sendGoawayAndClose(error, .failure)
        }

        /// The periodic check of the handshake, idle and keepalive timers.
        mutating func tick(now: UInt64, callsInFlight: Bool) -> Action {
            switch state {
            case .awaitingPreface, .awaitingHello:
                guard now - openedAt >= Self.nanoseconds(limits.handshakeTimeoutMs) else { return .none }
                state = .closing
                return .close(.handshakeTimeout)
            case .open(var open):
                if let action = frameTimeout(now: now, open) { return action }
                guard callsInFlight else {
                    let idle = now - max(open.lastInbound, open.lastCallEnded)
                    guard limits.idleTimeoutMs > 0, idle >= Self.nanoseconds(limits.idleTimeoutMs) else { return .none }
                    state = .closing
                    return .sendGoawayAndClose(
                        .unavailable("the connection was idle for \(limits.idleTimeoutMs) ms"), .idle)
                }
                let action = keepalive(now: now, &open)
                if case .open = state { state = .open(open) }
                return action
            case .draining(var open):
                if let action = frameTimeout(now: now, open) { return action }
                guard callsInFlight else {
                    state = .closing
                    return .close(.drained)
                }
                let action = keepalive(now: now, &open)
                if case .draining = state { state = .draining(open) }
                return action
            case .closing, .closed:
                return .none
            }
        }

        /// A frame begun longer ago than the frame timeout: GOAWAY and close.
        private mutating func frameTimeout(now: UInt64, _ open: Open) -> Action? {
            guard let since = open.partialFrameSince, now - since >= Self.nanoseconds(limits.frameTimeoutMs) else {
                return nil
            }
            state = .closing
            return .sendGoawayAndClose(
                .deadlineExceeded("the rest of a frame did not arrive within \(limits.frameTimeoutMs) ms"),
                .frameTimeout)
        }

        /// With calls in flight and a quiet peer: a PING, or the close when one went unanswered.
        private mutating func keepalive(now: UInt64, _ open: inout Open) -> Action {
            if let sentAt = open.pingSentAt {
                guard now - sentAt >= Self.nanoseconds(limits.keepaliveTimeoutMs) else { return .none }
                state = .closing
                return .close(.keepaliveTimeout)
            }
            guard now - open.lastInbound >= Self.nanoseconds(limits.keepaliveIntervalMs) else { return .none }
            open.pingSentAt = now
            return .sendPing(token: now)
        }

        /// Graceful shutdown begins: GOAWAY naming the last stream, then calls in flight finish.
        mutating func beginDrain(callsInFlight: Bool) -> Action {
            switch state {
            case .awaitingPreface, .awaitingHello:
                state = .closing
                return .close(.shutdownBeforeHello)
            case .open(let open):
                let error = RPCError.unavailable("the server is shutting down")
                guard callsInFlight else {
                    state = .closing
                    return .sendGoawayAndClose(error, .shutdown)
                }
                state = .draining(open)
                return .sendGoawayAndDrain(error)
            case .draining, .closing, .closed:
                return .none
            }
        }

        /// The last call in flight ended at `now`: the idle timer starts, or the drain is over.
        mutating func lastCallEnded(at now: UInt64) -> Action {
            switch state {
            case .open(var open):
                open.lastCallEnded = now
                state = .open(open)
                return .none
            case .draining:
                state = .closing
                return .close(.drained)
            case .awaitingPreface, .awaitingHello, .closing, .closed:
                return .none
            }
        }

        /// The drain's grace period is over and the streams still open were ended; the connection
        /// closes when nothing is left in flight.
        mutating func streamsForceEnded(callsInFlight: Bool) -> Action {
            guard !closeRequested, !callsInFlight else { return .none }
            state = .closing
            return .close(.drained)
        }

        /// The transport closed the connection.
        mutating func transportClosed() -> Action {
            if case .closed = state { return .none }
            state = .closed
            return .close(.transportClosed)
        }

        private static func nanoseconds(_ milliseconds: Int) -> UInt64 { UInt64(milliseconds) * 1_000_000 }
    }
}
