import Testing

@testable import RPCCore

/// The frame timeout in the connection's state machine: a partial frame is timed only in the
/// open and draining states, from when it began, and a whole frame ends it.
@Suite("ConnectionStateMachine: the frame timeout")
struct ConnectionFrameTimeoutTests {
    typealias Machine = ConnectionStateMachine

    static func ms(_ milliseconds: UInt64) -> UInt64 { milliseconds * 1_000_000 }

    static var limits: ServerLimits {
        var limits = ServerLimits()
        limits.handshakeTimeoutMs = 500
        limits.frameTimeoutMs = 1_000
        return limits
    }

    static func open(draining: Bool = false) -> Machine {
        var machine = Machine(openedAt: ms(1_000), limits: limits)
        machine.authenticated(anonymous: false, at: ms(1_100))
        if draining { _ = machine.beginDrain(callsInFlight: true) }
        return machine
    }

    @Test("open or draining: a frame begun 1 s ago closes the connection with GOAWAY", arguments: [false, true])
    func closesAfterTheTimeout(draining: Bool) {
        var machine = Self.open(draining: draining)
        machine.inputLeft(incomplete: true, at: Self.ms(2_000))
        machine.inputLeft(incomplete: true, at: Self.ms(2_500)) // more bytes, same frame
        #expect(machine.tick(now: Self.ms(2_999), callsInFlight: true) == .none)
        let action = machine.tick(now: Self.ms(3_000), callsInFlight: true)
        #expect(
            action
                == .sendGoawayAndClose(
                    .deadlineExceeded("the rest of a frame did not arrive within 1000 ms"), .frameTimeout))
        #expect(machine.state == .closing)
    }

    @Test("a whole frame, or nothing left over, ends the timer")
    func endedByAFrame() {
        var machine = Self.open()
        machine.inputLeft(incomplete: true, at: Self.ms(2_000))
        machine.inbound(at: Self.ms(2_900))
        #expect(machine.tick(now: Self.ms(3_500), callsInFlight: true) == .none)
        machine.inputLeft(incomplete: true, at: Self.ms(3_600))
        machine.inputLeft(incomplete: false, at: Self.ms(3_700))
        #expect(machine.tick(now: Self.ms(9_000), callsInFlight: true) == .none)
    }

    @Test("before the handshake the handshake timeout applies, not the frame timeout")
    func notBeforeHandshake() {
        var machine = Machine(openedAt: Self.ms(1_000), limits: Self.limits)
        machine.inputLeft(incomplete: true, at: Self.ms(1_010))
        #expect(machine.state == .awaitingHandshake)
        #expect(machine.tick(now: Self.ms(1_500), callsInFlight: false) == .close(.handshakeTimeout))
    }
}
