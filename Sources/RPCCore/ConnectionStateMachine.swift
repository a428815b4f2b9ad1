/// The lifecycle of one connection as one value, whichever wire it speaks: handshake, open,
/// draining, closing, closed.
///
/// Each state carries only what holds in it, so the combinations that separate flags allowed
/// cannot be written: a keepalive PING awaited before the handshake, a drain that goes on after
/// the connection was told to close, a second GOAWAY after the closing one. Its methods are the
/// events (the handshake's end, input, timer ticks, the last call ending, shutdown, the transport
/// closing) and return what the connection must do; it does no I/O and holds no calls, so every
/// transition is tested as a table (`ConnectionStateMachineTests`), as grpc-swift 2 and
/// Hummingbird test their connection state machines.
///
/// "Handshake" means what each wire has before its first call may run: our protocol's preface
/// and HELLO; on gRPC, HTTP/2's preface and a first request that authenticated (or, with no key
/// at all, a health check). A connection that authenticated without a key is `anonymous`: it is
/// held to the tightest limits, and its idle timeout is the handshake timeout.
///
/// Invariant: `.draining` has calls in flight, and `.closing` and `.closed` have none. The
/// core keeps it: every action that enters `.closing` or `.closed` ends the calls, and the drain
/// ends (`.closing`) when the core reports its last call ended.
public struct ConnectionStateMachine: Sendable {
    public enum State: Equatable, Sendable {
        /// Connected; no call may run yet.
        case awaitingHandshake
        /// Calls are accepted.
        case open(Open)
        /// GOAWAY sent: calls in flight finish and new ones are refused; closes after the last.
        case draining(Open)
        /// Nothing more is read; the connection closes once its output is written.
        case closing
        /// The transport closed the connection.
        case closed
    }

    /// What an open connection keeps for its idle and keepalive timers.
    public struct Open: Equatable, Sendable {
        /// When the last input arrived: a keepalive PING goes out after a quiet interval.
        public var lastInbound: UInt64
        /// When the last call in flight ended: a connection is idle only from then on.
        public var lastCallEnded: UInt64
        /// When the keepalive PING awaiting an answer was sent (any input answers it).
        public var pingSentAt: UInt64?
        /// When the frame the wire is waiting to complete began to arrive (nil: none is
        /// incomplete): the rest must come within the frame timeout.
        public var partialFrameSince: UInt64?
        /// Authenticated without a key (health checks only).
        public var anonymous: Bool

        public init(
            lastInbound: UInt64, lastCallEnded: UInt64, pingSentAt: UInt64? = nil, partialFrameSince: UInt64? = nil,
            anonymous: Bool = false
        ) {
            self.lastInbound = lastInbound
            self.lastCallEnded = lastCallEnded
            self.pingSentAt = pingSentAt
            self.partialFrameSince = partialFrameSince
            self.anonymous = anonymous
        }
    }

    /// Why the connection closes: the core logs by it.
    public enum CloseReason: Equatable, Sendable {
        /// The peer broke the protocol or was refused (bad preface, bad HELLO, oversized frame).
        case failure
        /// No call and no input for the idle timeout.
        case idle
        /// Shutdown of a connection with nothing in flight.
        case shutdown
        /// Shutdown before the handshake ended: a peer that never got going is just closed.
        case shutdownBeforeHandshake
        /// No handshake within the handshake timeout.
        case handshakeTimeout
        /// No input answered the keepalive PING in time.
        case keepaliveTimeout
        /// A frame began to arrive and its rest did not come within the frame timeout.
        case frameTimeout
        /// The drain ended: its last call completed, or the grace period cut its streams.
        case drained
        /// The wire ended the connection itself (HTTP/2: the peer's GOAWAY with no stream left,
        /// or an error its library answered with a GOAWAY of its own).
        case wireEnded
        /// The transport closed the connection (the peer went, or the server cut it).
        case transportClosed
    }

    /// What the core does after an event.
    public enum Action: Equatable, Sendable {
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

    public private(set) var state: State
    private let openedAt: UInt64
    private let limits: ServerLimits

    public init(openedAt: UInt64, limits: ServerLimits, state: State = .awaitingHandshake) {
        self.openedAt = openedAt
        self.limits = limits
        self.state = state
    }

    // MARK: Queries

    /// True while input is read: the handshake, open and draining states.
    public var isReading: Bool {
        switch state {
        case .awaitingHandshake, .open, .draining: true
        case .closing, .closed: false
        }
    }

    /// True once the connection should close (or has).
    public var closeRequested: Bool {
        switch state {
        case .closing, .closed: true
        case .awaitingHandshake, .open, .draining: false
        }
    }

    /// True while new calls are refused and those in flight finish.
    public var isDraining: Bool {
        if case .draining = state { return true }
        return false
    }

    /// True once a handshake has ended without a key, and none came since.
    public var isAnonymous: Bool {
        switch state {
        case .open(let open), .draining(let open): open.anonymous
        case .awaitingHandshake, .closing, .closed: false
        }
    }

    // MARK: Events

    /// The handshake ended at `now`: with a key, or without one (`anonymous`). A key after a
    /// key-less start (gRPC carries one per request) lifts the connection out of `anonymous`.
    public mutating func authenticated(anonymous: Bool, at now: UInt64) {
        switch state {
        case .awaitingHandshake:
            state = .open(Open(lastInbound: now, lastCallEnded: openedAt, anonymous: anonymous))
        case .open(var open) where open.anonymous && !anonymous:
            open.anonymous = false
            state = .open(open)
        case .draining(var open) where open.anonymous && !anonymous:
            open.anonymous = false
            state = .draining(open)
        case .open, .draining, .closing, .closed:
            break
        }
    }

    /// Input arrived at `now` (a whole frame): the peer is alive, whatever it sent, and nothing
    /// is partial until `inputLeft` says so.
    public mutating func inbound(at now: UInt64) {
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
        case .awaitingHandshake, .closing, .closed:
            break
        }
    }

    /// After the bytes received so far: `incomplete` when they end in part of a frame, which
    /// then has the frame timeout to complete from `now` (or from when it began, if it began
    /// before); false when nothing waits (every byte consumed, or the transport holds the rest
    /// back itself). Only an open or draining connection keeps the time; before the handshake
    /// ends, the handshake timeout bounds a partial frame.
    public mutating func inputLeft(incomplete: Bool, at now: UInt64) {
        switch state {
        case .open(var open):
            guard (open.partialFrameSince != nil) != incomplete else { return }
            open.partialFrameSince = incomplete ? now : nil
            state = .open(open)
        case .draining(var open):
            guard (open.partialFrameSince != nil) != incomplete else { return }
            open.partialFrameSince = incomplete ? now : nil
            state = .draining(open)
        case .awaitingHandshake, .closing, .closed:
            break
        }
    }

    /// The peer broke the protocol or was refused: GOAWAY with `error`, then close.
    public mutating func failed(_ error: RPCError) -> Action {
        guard !closeRequested else { return .none }
        state = .closing
        return .sendGoawayAndClose(error, .failure)
    }

    /// The time from `since` to `now`, none when `since` is later: events are stamped as they
    /// happen, and a tick may carry the time its loop read before them (a call that ended during
    /// the tick's own pass over the connections).
    static func elapsed(_ now: UInt64, since: UInt64) -> UInt64 {
        now > since ? now - since : 0
    }

    /// The periodic check of the handshake, idle, keepalive and frame timers.
    public mutating func tick(now: UInt64, callsInFlight: Bool) -> Action {
        switch state {
        case .awaitingHandshake:
            guard Self.elapsed(now, since: openedAt) >= Self.nanoseconds(limits.handshakeTimeoutMs) else {
                return .none
            }
            state = .closing
            return .close(.handshakeTimeout)
        case .open(var open):
            if let action = frameTimeout(now: now, open) { return action }
            guard callsInFlight else {
                let idle = Self.elapsed(now, since: max(open.lastInbound, open.lastCallEnded))
                // A connection with no key has no more time to stay than it had to authenticate.
                let limit = open.anonymous ? limits.handshakeTimeoutMs : limits.idleTimeoutMs
                guard limit > 0, idle >= Self.nanoseconds(limit) else { return .none }
                state = .closing
                return .sendGoawayAndClose(.unavailable("the connection was idle for \(limit) ms"), .idle)
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
        guard let since = open.partialFrameSince,
            Self.elapsed(now, since: since) >= Self.nanoseconds(limits.frameTimeoutMs)
        else {
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
            guard Self.elapsed(now, since: sentAt) >= Self.nanoseconds(limits.keepaliveTimeoutMs) else { return .none }
            state = .closing
            return .close(.keepaliveTimeout)
        }
        guard Self.elapsed(now, since: open.lastInbound) >= Self.nanoseconds(limits.keepaliveIntervalMs) else {
            return .none
        }
        open.pingSentAt = now
        return .sendPing(token: now)
    }

    /// Graceful shutdown begins: GOAWAY naming the last stream, then calls in flight finish.
    public mutating func beginDrain(callsInFlight: Bool) -> Action {
        switch state {
        case .awaitingHandshake:
            state = .closing
            return .close(.shutdownBeforeHandshake)
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
    public mutating func lastCallEnded(at now: UInt64) -> Action {
        switch state {
        case .open(var open):
            open.lastCallEnded = now
            state = .open(open)
            return .none
        case .draining:
            state = .closing
            return .close(.drained)
        case .awaitingHandshake, .closing, .closed:
            return .none
        }
    }

    /// The drain's grace period is over and the streams still open were ended; the connection
    /// closes when nothing is left in flight.
    public mutating func streamsForceEnded(callsInFlight: Bool) -> Action {
        guard !closeRequested, !callsInFlight else { return .none }
        state = .closing
        return .close(.drained)
    }

    /// The wire is done with the connection (see `CloseReason.wireEnded`).
    public mutating func wireEnded() -> Action {
        guard !closeRequested else { return .none }
        state = .closing
        return .close(.wireEnded)
    }

    /// The transport closed the connection.
    public mutating func transportClosed() -> Action {
        if case .closed = state { return .none }
        state = .closed
        return .close(.transportClosed)
    }

    private static func nanoseconds(_ milliseconds: Int) -> UInt64 { UInt64(milliseconds) * 1_000_000 }
}
