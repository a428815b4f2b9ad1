import Testing

@testable import RPCPosix

/// The socket layer's I/O state as a table: from a starting state, a sequence of steps (epoll
/// events and the connection's own news), the actions they return and where the state ends —
/// what is read, what is watched, when writes may be tried. Both wires' connections go through
/// it, TLS or not.
@Suite("SocketIOState: the socket's I/O state, step by step")
struct SocketIOStateTests {
    /// One thing that happens to a connection's socket, and what `SocketIOState` answers.
    enum Step: CustomStringConvertible {
        case event(EpollEvents, expect: SocketIOState.EventAction)
        case handshakeWaits(EpollEvents)
        case handshakeCompleted
        case output(pending: Int, allowance: Int, resumes: Bool)
        case budgetShort
        case resumeInput(resumes: Bool)
        case largeRequestTaken
        case largeRequestTakenIn(resumes: Bool)
        case yielded(first: Bool)
        case turnResumed
        case tlsReadNeedsWritable
        case writeBlocked(needsInput: Bool)
        case closing
        case startLinger
        case closed

        var description: String {
            switch self {
            case .event(let events, let action): "event \(events) → \(action)"
            case .handshakeWaits(let events): "handshake waits for \(events)"
            case .handshakeCompleted: "handshake completed"
            case .output(let pending, let allowance, _): "output \(pending) of \(allowance)"
            case .budgetShort: "budget short"
            case .resumeInput: "budget has room"
            case .largeRequestTaken: "large request off the loop"
            case .largeRequestTakenIn: "large request taken in"
            case .yielded: "turn share spent"
            case .turnResumed: "next turn"
            case .tlsReadNeedsWritable: "TLS read needs writable"
            case .writeBlocked(let needsInput): needsInput ? "TLS write needs input" : "write blocked"
            case .closing: "close requested"
            case .startLinger: "linger"
            case .closed: "closed"
            }
        }

        func apply(to state: inout SocketIOState) {
            switch self {
            case .event(let events, let expected):
                let action = state.event(events)
                #expect(action == expected, "\(self): got \(action)")
            case .handshakeWaits(let events): state.handshakeWaits(for: events)
            case .handshakeCompleted: state.handshakeCompleted()
            case .output(let pending, let allowance, let resumes):
                #expect(state.outputStands(at: pending, allowance: allowance) == resumes, "\(self)")
            case .budgetShort: state.budgetShort()
            case .resumeInput(let resumes): #expect(state.resumeInput() == resumes, "\(self)")
            case .largeRequestTaken: state.largeRequestTaken()
            case .largeRequestTakenIn(let resumes): #expect(state.largeRequestTakenIn() == resumes, "\(self)")
            case .yielded(let first): #expect(state.yielded() == first, "\(self)")
            case .turnResumed: state.turnResumed()
            case .tlsReadNeedsWritable: state.tlsReadNeedsWritable()
            case .writeBlocked(let needsInput): state.writeBlocked(needsInput: needsInput)
            case .closing: state.closing()
            case .startLinger: state.startLinger()
            case .closed: state.closed()
            }
        }
    }

    /// Where a case should end: reading, writing, what is watched with output pending.
    struct End: Equatable, CustomStringConvertible {
        var reading: Bool
        var canWrite: Bool
        var interest: EpollEvents
        var phase: SocketIOState.Phase

        var description: String { "reading \(reading), canWrite \(canWrite), interest \(interest), \(phase)" }
    }

    static let readable: EpollEvents = [.input]
    static let watchAll: EpollEvents = [.input, .readHangUp, .output]

    static let cases: [(name: String, tls: Bool, steps: [Step], end: End)] = [
        (
            "a plaintext connection reads at once", false,
            [.event(readable, expect: .handle(flush: false, read: true))],
            End(reading: true, canWrite: true, interest: watchAll, phase: .open(reading: [], writing: .ready))
        ),
        (
            "TLS: the handshake is driven until it completes, then bytes move", true,
            [
                .event(readable, expect: .continueHandshake), .handshakeWaits([.output]),
                .event([.output], expect: .continueHandshake), .handshakeCompleted,
                .event(readable, expect: .handle(flush: false, read: true)),
            ],
            End(reading: true, canWrite: true, interest: watchAll, phase: .open(reading: [], writing: .ready))
        ),
        (
            "an error or hang-up without input closes", false, [.event([.error, .hangUp], expect: .close)],
            End(reading: true, canWrite: true, interest: watchAll, phase: .open(reading: [], writing: .ready))
        ),
        (
            "output over the allowance stops reading; at half it resumes", false,
            [
                .output(pending: 9_000, allowance: 8_000, resumes: false),
                .event(readable, expect: .handle(flush: false, read: false)),
                .output(pending: 5_000, allowance: 8_000, resumes: false),
                .output(pending: 4_000, allowance: 8_000, resumes: true),
            ],
            End(reading: true, canWrite: true, interest: watchAll, phase: .open(reading: [], writing: .ready))
        ),
        (
            "two holds: reading resumes only when both are released", false,
            [
                .budgetShort, .largeRequestTaken, .resumeInput(resumes: true),
                .event(readable, expect: .handle(flush: false, read: false)), .largeRequestTakenIn(resumes: true),
            ],
            End(reading: true, canWrite: true, interest: watchAll, phase: .open(reading: [], writing: .ready))
        ),
        (
            "a release with nothing held resumes nothing", false,
            [.resumeInput(resumes: false), .largeRequestTakenIn(resumes: false)],
            End(reading: true, canWrite: true, interest: watchAll, phase: .open(reading: [], writing: .ready))
        ),
        (
            "a spent turn share still watches input (it must wake the loop), but does not read", false,
            [
                .yielded(first: true), .yielded(first: false),
                .event(readable, expect: .handle(flush: false, read: false)),
            ],
            End(
                reading: false, canWrite: true, interest: watchAll,
                phase: .open(reading: .turnShareSpent, writing: .ready))
        ),
        (
            "the next turn resumes a spent share", false, [.yielded(first: true), .turnResumed],
            End(reading: true, canWrite: true, interest: watchAll, phase: .open(reading: [], writing: .ready))
        ),
        (
            "a blocked write waits for writable, then flushes", false,
            [.writeBlocked(needsInput: false), .event([.output], expect: .handle(flush: true, read: false))],
            End(reading: true, canWrite: true, interest: watchAll, phase: .open(reading: [], writing: .ready))
        ),
        (
            "a blocked write is not tried while blocked", false, [.writeBlocked(needsInput: false)],
            End(reading: true, canWrite: false, interest: watchAll, phase: .open(reading: [], writing: .blocked))
        ),
        (
            "TLS: a write that needs input flushes when the socket is readable", true,
            [
                .handshakeCompleted, .writeBlocked(needsInput: true),
                .event(readable, expect: .handle(flush: true, read: true)),
            ],
            End(reading: true, canWrite: true, interest: watchAll, phase: .open(reading: [], writing: .ready))
        ),
        (
            "TLS: a read that needs writable watches output only, then reads when writable", true,
            [
                .handshakeCompleted, .tlsReadNeedsWritable,
                .event(readable, expect: .handle(flush: false, read: false)),
                .event([.output], expect: .handle(flush: true, read: true)),
            ],
            End(reading: true, canWrite: true, interest: watchAll, phase: .open(reading: [], writing: .ready))
        ),
        (
            "close requested: nothing more is read, and output holds no longer apply", false,
            [.closing, .output(pending: 0, allowance: 8_000, resumes: false)],
            End(reading: false, canWrite: true, interest: [.output], phase: .open(reading: .closing, writing: .ready))
        ),
        (
            "lingering: input is dropped until the peer closes", false,
            [.closing, .startLinger, .event(readable, expect: .dropInput)],
            End(reading: false, canWrite: false, interest: [.input, .readHangUp], phase: .lingering)
        ),
        (
            "closed: nothing is watched and holds change nothing", false,
            [
                .closed, .budgetShort, .writeBlocked(needsInput: false),
                .event(readable, expect: .handle(flush: false, read: false)),
            ],
            End(reading: false, canWrite: false, interest: [], phase: .closed)
        ),
    ]

    @Test("each case's steps return the actions and end in the state expected", arguments: cases.indices)
    func table(index: Int) {
        let (name, tls, steps, end) = Self.cases[index]
        var state = SocketIOState(tls: tls)
        for step in steps { step.apply(to: &state) }
        let got = End(
            reading: state.isReading, canWrite: state.canWrite, interest: state.interest(pendingOutput: 1),
            phase: state.phase)
        #expect(got == end, "\(name): \(steps)")
    }

    @Test("with no output pending, an open connection watches input only")
    func quietInterest() {
        let state = SocketIOState(tls: false)
        #expect(state.interest(pendingOutput: 0) == [.input, .readHangUp])
    }
}
