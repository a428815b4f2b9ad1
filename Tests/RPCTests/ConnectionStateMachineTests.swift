import Testing

@testable import RPCCore

/// The connection lifecycle as a table: state × event → next state + action, with no core, no
/// bytes and no clock — the transitions alone, as grpc-swift 2 tests its connection state
/// machines. One machine serves both wires, so each event row stands for what either codec
/// reports: our HELLO or gRPC's first authenticated request (`authenticated`), a HELLO with no
/// key or a key-less gRPC health check (`authenticated(anonymous:)`), any whole frame of either
/// wire (`inbound`), a partial one (`inputLeft`), a broken frame stream or an HTTP/2 connection
/// error (`failed`), HTTP/2's own end of the connection or an HTTP/1 client answered
/// (`wireEnded`).
///
/// The rows marked "forbidden" are the contradictory combinations separate flags could reach
/// and the one enum cannot: a second GOAWAY after the closing one, a drain or a PING on a
/// connection already told to close, a keepalive before the handshake.
@Suite("ConnectionStateMachine: every transition, for both wires' events")
struct ConnectionStateMachineTests {
    typealias Machine = ConnectionStateMachine
    typealias State = Machine.State
    typealias Open = Machine.Open
    typealias Action = Machine.Action

    /// Nanoseconds in `milliseconds`.
    static func ms(_ milliseconds: UInt64) -> UInt64 { milliseconds * 1_000_000 }

    /// When the connection was accepted; every time below is after it.
    static let openedAt = ms(1_000)

    static var limits: ServerLimits {
        var limits = ServerLimits()
        limits.handshakeTimeoutMs = 500
        limits.idleTimeoutMs = 1_000
        limits.keepaliveIntervalMs = 2_000
        limits.keepaliveTimeoutMs = 500
        return limits
    }

    /// An authenticated connection whose last frame came at 2 s, with no PING outstanding.
    static let quiet = Open(lastInbound: ms(2_000), lastCallEnded: openedAt, pingSentAt: nil)
    /// The same, with a keepalive PING sent at 5 s and not answered yet.
    static let pinged = Open(lastInbound: ms(2_000), lastCallEnded: openedAt, pingSentAt: ms(5_000))

    static let violation = RPCError.protocolViolation("CALL on stream 0")
    static let shuttingDown = RPCError.unavailable("the server is shutting down")
    static let idle = RPCError.unavailable("the connection was idle for 1000 ms")

    enum Event: Sendable, CustomStringConvertible {
        case authenticated(anonymous: Bool, at: UInt64)
        case inbound(at: UInt64)
        case inputLeft(incomplete: Bool, at: UInt64)
        case failed(RPCError)
        case wireEnded
        case tick(now: UInt64, callsInFlight: Bool)
        case beginDrain(callsInFlight: Bool)
        case lastCallEnded(at: UInt64)
        case streamsForceEnded(callsInFlight: Bool)
        case transportClosed

        func apply(to machine: inout Machine) -> Action {
            switch self {
            case .authenticated(let anonymous, let now):
                machine.authenticated(anonymous: anonymous, at: now)
                return .none
            case .inbound(let now):
                machine.inbound(at: now)
                return .none
            case .inputLeft(let incomplete, let now):
                machine.inputLeft(incomplete: incomplete, at: now)
                return .none
            case .failed(let error): return machine.failed(error)
            case .wireEnded: return machine.wireEnded()
            case .tick(let now, let callsInFlight): return machine.tick(now: now, callsInFlight: callsInFlight)
            case .beginDrain(let callsInFlight): return machine.beginDrain(callsInFlight: callsInFlight)
            case .lastCallEnded(let now): return machine.lastCallEnded(at: now)
            case .streamsForceEnded(let callsInFlight): return machine.streamsForceEnded(callsInFlight: callsInFlight)
            case .transportClosed: return machine.transportClosed()
            }
        }

        var description: String {
            switch self {
            case .authenticated(let anonymous, let now):
                "\(anonymous ? "handshake without a key" : "handshake with a key") at \(now / 1_000_000) ms"
            case .inbound(let now): "frame at \(now / 1_000_000) ms"
            case .inputLeft(let incomplete, let now):
                "\(incomplete ? "part of a frame left" : "nothing left") at \(now / 1_000_000) ms"
            case .failed(let error): "failure \(error.errorCode)"
            case .wireEnded: "the wire ended the connection"
            case .tick(let now, let calls): "tick at \(now / 1_000_000) ms\(calls ? ", calls in flight" : ", no call")"
            case .beginDrain(let calls): "drain\(calls ? ", calls in flight" : ", no call")"
            case .lastCallEnded(let now): "last call ended at \(now / 1_000_000) ms"
            case .streamsForceEnded(let calls): "streams cut\(calls ? ", unary calls left" : ", nothing left")"
            case .transportClosed: "transport closed"
            }
        }
    }

    struct Transition: Sendable, CustomTestStringConvertible {
        let from: State
        let event: Event
        let to: State
        var action: Action = .none
        var note = ""

        var testDescription: String {
            "\(Self.name(from)) + \(event) → \(Self.name(to))" + (note.isEmpty ? "" : " (\(note))")
        }

        static func name(_ state: State) -> String {
            switch state {
            case .awaitingHandshake: "awaitingHandshake"
            case .open(let open):
                (open.anonymous ? "open without a key" : "open") + (open.pingSentAt == nil ? "" : ", PING sent")
                    + (open.partialFrameSince == nil ? "" : ", a frame partial")
            case .draining(let open): open.pingSentAt == nil ? "draining" : "draining, PING sent"
            case .closing: "closing"
            case .closed: "closed"
            }
        }
    }

    /// An anonymous connection (no key) whose last frame came at 2 s.
    static let anonymous = Open(lastInbound: ms(2_000), lastCallEnded: openedAt, anonymous: true)
    /// A connection with part of a frame since 2.2 s.
    static let partial = Open(lastInbound: ms(2_000), lastCallEnded: openedAt, partialFrameSince: ms(2_200))

    static let transitions: [Transition] = [
        // Handshake: our HELLO, or gRPC's first request with a key (or a health check without).
        Transition(
            from: .awaitingHandshake, event: .authenticated(anonymous: false, at: ms(1_200)),
            to: .open(Open(lastInbound: ms(1_200), lastCallEnded: openedAt))),
        Transition(
            from: .awaitingHandshake, event: .authenticated(anonymous: true, at: ms(1_200)),
            to: .open(Open(lastInbound: ms(1_200), lastCallEnded: openedAt, anonymous: true)),
            note: "no key: health checks only"),
        Transition(
            from: .awaitingHandshake, event: .inbound(at: ms(1_200)), to: .awaitingHandshake,
            note: "forbidden: keepalive state before the handshake"),
        Transition(
            from: .awaitingHandshake, event: .inputLeft(incomplete: true, at: ms(1_200)), to: .awaitingHandshake,
            note: "the handshake timeout bounds a partial frame before it"),
        Transition(
            from: .awaitingHandshake, event: .tick(now: ms(1_499), callsInFlight: false), to: .awaitingHandshake),
        Transition(
            from: .awaitingHandshake, event: .tick(now: ms(1_500), callsInFlight: false), to: .closing,
            action: .close(.handshakeTimeout), note: "handshake timeout"),
        Transition(
            from: .awaitingHandshake, event: .beginDrain(callsInFlight: false), to: .closing,
            action: .close(.shutdownBeforeHandshake), note: "no GOAWAY before the handshake"),
        Transition(
            from: .awaitingHandshake, event: .failed(violation), to: .closing,
            action: .sendGoawayAndClose(violation, .failure), note: "bad preface, bad HELLO, HTTP/2 error"),
        Transition(
            from: .awaitingHandshake, event: .wireEnded, to: .closing, action: .close(.wireEnded),
            note: "an HTTP/1 client answered in HTTP/1"),
        Transition(
            from: .awaitingHandshake, event: .transportClosed, to: .closed, action: .close(.transportClosed)),

        // Without a key.
        Transition(
            from: .open(anonymous), event: .tick(now: ms(2_499), callsInFlight: false), to: .open(anonymous),
            note: "idle counts the handshake timeout without a key"),
        Transition(
            from: .open(anonymous), event: .tick(now: ms(2_500), callsInFlight: false), to: .closing,
            action: .sendGoawayAndClose(.unavailable("the connection was idle for 500 ms"), .idle),
            note: "idle after the handshake timeout without a key"),
        Transition(
            from: .open(anonymous), event: .authenticated(anonymous: false, at: ms(2_100)),
            to: .open(Open(lastInbound: ms(2_000), lastCallEnded: openedAt)),
            note: "a gRPC request with a key lifts a key-less connection"),
        Transition(
            from: .open(quiet), event: .authenticated(anonymous: true, at: ms(2_100)), to: .open(quiet),
            note: "a key-less health check leaves a keyed connection as it is"),

        // Partial frames.
        Transition(
            from: .open(quiet), event: .inputLeft(incomplete: true, at: ms(2_200)), to: .open(partial)),
        Transition(
            from: .open(partial), event: .inputLeft(incomplete: true, at: ms(2_900)), to: .open(partial),
            note: "the frame timeout runs from the frame's start"),
        Transition(from: .open(partial), event: .inputLeft(incomplete: false, at: ms(2_900)), to: .open(quiet)),

        // Established.
        Transition(
            from: .open(quiet), event: .inbound(at: ms(2_500)),
            to: .open(Open(lastInbound: ms(2_500), lastCallEnded: openedAt, pingSentAt: nil))),
        Transition(
            from: .open(quiet), event: .authenticated(anonymous: false, at: ms(2_500)), to: .open(quiet),
            note: "a second handshake opens nothing"),
        Transition(
            from: .open(quiet), event: .wireEnded, to: .closing, action: .close(.wireEnded),
            note: "HTTP/2's GOAWAY exchange ended"),
        Transition(from: .open(quiet), event: .tick(now: ms(2_999), callsInFlight: false), to: .open(quiet)),
        Transition(
            from: .open(quiet), event: .tick(now: ms(3_000), callsInFlight: false), to: .closing,
            action: .sendGoawayAndClose(idle, .idle), note: "idle timeout"),
        Transition(
            from: .open(Open(lastInbound: ms(2_000), lastCallEnded: ms(2_600), pingSentAt: nil)),
            event: .tick(now: ms(3_000), callsInFlight: false),
            to: .open(Open(lastInbound: ms(2_000), lastCallEnded: ms(2_600), pingSentAt: nil)),
            note: "idle counts from the last call's end"),
        Transition(
            from: .open(quiet), event: .tick(now: ms(3_999), callsInFlight: true), to: .open(quiet),
            note: "a connection with calls is never idle"),
        Transition(
            from: .open(quiet), event: .tick(now: ms(4_000), callsInFlight: true),
            to: .open(Open(lastInbound: ms(2_000), lastCallEnded: openedAt, pingSentAt: ms(4_000))),
            action: .sendPing(token: ms(4_000)), note: "keepalive PING sent"),
        Transition(
            from: .open(pinged), event: .tick(now: ms(5_499), callsInFlight: true), to: .open(pinged),
            note: "one PING at a time"),
        Transition(
            from: .open(pinged), event: .inbound(at: ms(5_200)),
            to: .open(Open(lastInbound: ms(5_200), lastCallEnded: openedAt, pingSentAt: nil)),
            note: "PONG (any frame) received"),
        Transition(
            from: .open(pinged), event: .tick(now: ms(5_500), callsInFlight: true), to: .closing,
            action: .close(.keepaliveTimeout), note: "PING timeout"),
        Transition(
            from: .open(quiet), event: .lastCallEnded(at: ms(2_600)),
            to: .open(Open(lastInbound: ms(2_000), lastCallEnded: ms(2_600), pingSentAt: nil))),
        Transition(
            from: .open(quiet), event: .beginDrain(callsInFlight: true), to: .draining(quiet),
            action: .sendGoawayAndDrain(shuttingDown), note: "drain with calls in flight"),
        Transition(
            from: .open(quiet), event: .beginDrain(callsInFlight: false), to: .closing,
            action: .sendGoawayAndClose(shuttingDown, .shutdown), note: "drain with nothing in flight"),
        Transition(
            from: .open(quiet), event: .failed(violation), to: .closing,
            action: .sendGoawayAndClose(violation, .failure), note: "protocol violation"),
        Transition(from: .open(quiet), event: .streamsForceEnded(callsInFlight: true), to: .open(quiet)),
        Transition(
            from: .open(quiet), event: .streamsForceEnded(callsInFlight: false), to: .closing, action: .close(.drained)),
        Transition(from: .open(pinged), event: .transportClosed, to: .closed, action: .close(.transportClosed)),

        // Draining.
        Transition(
            from: .draining(quiet), event: .lastCallEnded(at: ms(2_600)), to: .closing,
            action: .close(.drained), note: "draining finished"),
        Transition(
            from: .draining(quiet), event: .beginDrain(callsInFlight: true), to: .draining(quiet),
            note: "forbidden: a second GOAWAY"),
        Transition(
            from: .draining(quiet), event: .inbound(at: ms(2_500)),
            to: .draining(Open(lastInbound: ms(2_500), lastCallEnded: openedAt, pingSentAt: nil))),
        Transition(
            from: .draining(quiet), event: .tick(now: ms(4_000), callsInFlight: true),
            to: .draining(Open(lastInbound: ms(2_000), lastCallEnded: openedAt, pingSentAt: ms(4_000))),
            action: .sendPing(token: ms(4_000)), note: "keepalive goes on while draining"),
        Transition(
            from: .draining(pinged), event: .tick(now: ms(5_500), callsInFlight: true), to: .closing,
            action: .close(.keepaliveTimeout), note: "PING timeout"),
        Transition(
            from: .draining(quiet), event: .tick(now: ms(3_000), callsInFlight: false), to: .closing,
            action: .close(.drained), note: "a drain with nothing in flight is over, never idle"),
        Transition(
            from: .draining(quiet), event: .streamsForceEnded(callsInFlight: true), to: .draining(quiet),
            note: "unary calls still finish"),
        Transition(
            from: .draining(quiet), event: .streamsForceEnded(callsInFlight: false), to: .closing,
            action: .close(.drained), note: "grace period over"),
        Transition(
            from: .draining(quiet), event: .failed(violation), to: .closing,
            action: .sendGoawayAndClose(violation, .failure), note: "protocol violation"),
        Transition(from: .draining(quiet), event: .transportClosed, to: .closed, action: .close(.transportClosed)),

        // Close requested: the output is flushed, nothing else happens.
        Transition(
            from: .closing, event: .beginDrain(callsInFlight: false), to: .closing,
            note: "forbidden: a drain's GOAWAY after the closing one"),
        Transition(from: .closing, event: .failed(violation), to: .closing, note: "forbidden: a second GOAWAY"),
        Transition(
            from: .closing, event: .tick(now: ms(100_000), callsInFlight: false), to: .closing,
            note: "forbidden: idle GOAWAY or PING on a closing connection"),
        Transition(from: .closing, event: .inbound(at: ms(2_500)), to: .closing),
        Transition(from: .closing, event: .lastCallEnded(at: ms(2_500)), to: .closing),
        Transition(from: .closing, event: .streamsForceEnded(callsInFlight: false), to: .closing),
        Transition(from: .closing, event: .transportClosed, to: .closed, action: .close(.transportClosed)),

        // Closed.
        Transition(from: .closed, event: .transportClosed, to: .closed, note: "calls end once"),
        Transition(from: .closed, event: .beginDrain(callsInFlight: false), to: .closed),
        Transition(from: .closed, event: .tick(now: ms(100_000), callsInFlight: false), to: .closed),
        Transition(from: .closed, event: .failed(violation), to: .closed),
        Transition(from: .closed, event: .wireEnded, to: .closed),
    ]

    @Test("transition", arguments: transitions)
    func transition(_ row: Transition) {
        var machine = Machine(openedAt: Self.openedAt, limits: Self.limits, state: row.from)
        let action = row.event.apply(to: &machine)
        #expect(machine.state == row.to)
        #expect(action == row.action)
    }

    struct Query: Sendable, CustomTestStringConvertible {
        let state: State
        let isReading: Bool
        let closeRequested: Bool
        let isDraining: Bool
        var testDescription: String { Transition.name(state) }
    }

    @Test(
        "what each state reads, closes and refuses",
        arguments: [
            Query(state: .awaitingHandshake, isReading: true, closeRequested: false, isDraining: false),
            Query(state: .open(quiet), isReading: true, closeRequested: false, isDraining: false),
            Query(state: .draining(quiet), isReading: true, closeRequested: false, isDraining: true),
            Query(state: .closing, isReading: false, closeRequested: true, isDraining: false),
            Query(state: .closed, isReading: false, closeRequested: true, isDraining: false),
        ])
    func queries(_ query: Query) {
        let machine = Machine(openedAt: Self.openedAt, limits: Self.limits, state: query.state)
        #expect(machine.isReading == query.isReading)
        #expect(machine.closeRequested == query.closeRequested)
        #expect(machine.isDraining == query.isDraining)
    }

    @Test("an idle timeout of 0 never closes an open connection")
    func idleDisabled() {
        var limits = Self.limits
        limits.idleTimeoutMs = 0
        var machine = Machine(openedAt: Self.openedAt, limits: limits, state: .open(Self.quiet))
        #expect(machine.tick(now: Self.ms(86_400_000), callsInFlight: false) == .none)
        #expect(machine.state == .open(Self.quiet))
    }

    @Test(
        "a tick whose time was read before the events it follows (a call ended during the tick's pass) counts none of them as elapsed",
        arguments: [false, true])
    func tickBehindEvents(anonymous: Bool) {
        var machine = Machine(openedAt: Self.openedAt, limits: Self.limits)
        machine.authenticated(anonymous: anonymous, at: Self.ms(1_000))
        machine.inbound(at: Self.ms(2_000))
        #expect(machine.lastCallEnded(at: Self.ms(2_500)) == .none)
        #expect(machine.tick(now: Self.ms(2_400), callsInFlight: false) == .none)
        #expect(machine.tick(now: Self.ms(1_900), callsInFlight: true) == .none)
        #expect(!machine.closeRequested)
    }

    @Test("a whole life: handshake, calls, a PING answered, drain, the last call, close")
    func wholeLife() {
        var machine = Machine(openedAt: Self.openedAt, limits: Self.limits)
        machine.authenticated(anonymous: false, at: Self.ms(1_100))
        #expect(machine.tick(now: Self.ms(3_100), callsInFlight: true) == .sendPing(token: Self.ms(3_100)))
        machine.inbound(at: Self.ms(3_200))
        #expect(machine.tick(now: Self.ms(3_700), callsInFlight: true) == .none, "the PING was answered")
        #expect(machine.beginDrain(callsInFlight: true) == .sendGoawayAndDrain(Self.shuttingDown))
        #expect(machine.isDraining && !machine.closeRequested)
        #expect(machine.lastCallEnded(at: Self.ms(3_800)) == .close(.drained))
        #expect(machine.closeRequested && !machine.isReading)
        #expect(machine.transportClosed() == .close(.transportClosed))
        #expect(machine.state == .closed)
    }
}
