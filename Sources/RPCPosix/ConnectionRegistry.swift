import RPCCore

/// What a loop does with each of its connections: timers, shutdown, and the memory budget's cuts.
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

extension ConnectionCore: ClosingSession {}

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
