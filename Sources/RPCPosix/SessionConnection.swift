import RPCCore
import RPCGRPC

/// A session as its connection drives it, whichever wire it speaks (`ServerSession`,
/// `GRPCSession`): each event the connection hands on returns what the transport does.
protocol DrivenSession: ClosingSession {
    func deliver(streamID: UInt32, frame: [UInt8], final: Bool) -> ServerSession.TransportActions
    func deliver(_ frames: ArraySlice<OutgoingFrame>) -> ServerSession.TransportActions
    func deliverInline(
        streamID: UInt32, final: Bool, _ write: (inout [UInt8]) -> Void
    ) -> ServerSession.TransportActions?
    func tick(now: UInt64) -> ServerSession.TransportActions
    func beginDrain() -> ServerSession.TransportActions
    func forceEndStreams() -> ServerSession.TransportActions
    func expireDeadlines(now: UInt64) -> ServerSession.TransportActions
}

/// Bytes of a port's frames a connection encodes into its output before writing it (`deliver`).
let deliverySliceBytes = 128 * 1024

extension ServerSession: DrivenSession {}
extension GRPCSession: DrivenSession {}

/// What both kinds of connection do alike between their loop and their session: hand it the
/// completions, timer ticks and shutdown steps, on the loop and never once closed, and keep its
/// one deadline timer where it asks. Each connection carries out the actions in its own way
/// (`carryOut`).
protocol SessionConnection: AnyObject {
    associatedtype Session: DrivenSession
    var session: Session { get }
    var loop: EventLoop { get }
    var isClosed: Bool { get }
    /// The one timer for the calls' deadlines; `close` cancels it, so it never fires after.
    var deadlineTimer: TimerHandle? { get set }
    /// Does what the session asked for after an event.
    func carryOut(_ actions: ServerSession.TransportActions)
    /// Writes what the session's output holds, as far as the socket takes it.
    func flush()
}

extension SessionConnection {
    /// Moves the deadline timer to `deadline`, cancelling the one armed: the session asks only
    /// for a deadline earlier than the one armed, or for the next after the timer fired.
    func armDeadlineTimer(at deadline: UInt64) {
        if let deadlineTimer { loop.cancel(deadlineTimer) }
        deadlineTimer = loop.schedule(at: deadline) { [unowned self] in
            self.deadlineTimer = nil
            self.carryOut(self.session.expireDeadlines(now: self.loop.now))
        }
    }

    func deliverInline(streamID: UInt32, final: Bool, _ write: (inout [UInt8]) -> Void) -> Bool {
        loop.assertInEventLoop()
        guard !isClosed else { return true }
        guard let actions = session.deliverInline(streamID: streamID, final: final, write) else { return false }
        carryOut(actions)
        return true
    }

    func deliver(streamID: UInt32, frame: [UInt8], final: Bool) {
        loop.assertInEventLoop()
        guard !isClosed else { return }
        carryOut(session.deliver(streamID: streamID, frame: frame, final: final))
    }

    /// One frame a port queued alone (each port of a fan-out over one socket per subscriber gets
    /// one), handed over without an array to carry it.
    func deliver(_ frame: OutgoingFrame) {
        loop.assertInEventLoop()
        guard !isClosed else { return }
        switch frame {
        case .frame(let streamID, let bytes, let final):
            carryOut(session.deliver(streamID: streamID, frame: bytes, final: final))
        case .message(let streamID, let body):
            let write = { (output: inout [UInt8]) in
                FrameWriter.streamMessage(streamID: streamID, encoded: body, deflater: nil, into: &output)
            }
            if let actions = session.deliverInline(streamID: streamID, final: false, write) { carryOut(actions) }
        }
    }

    /// Takes a port's frames in slices of about `deliverySliceBytes`, each written (as far as the
    /// socket takes it) before the next is encoded: a fan-out can hand a connection megabytes at
    /// once, and encoded whole they would grow the output past the buffer a connection keeps
    /// between writes (256 KiB) — a fresh mapping, its page faults and a copy each time.
    func deliver(_ frames: [OutgoingFrame]) {
        loop.assertInEventLoop()
        var start = frames.startIndex
        while start < frames.endIndex, !isClosed {
            var end = start
            var bytes = 0
            repeat {
                bytes += frames[end].wireSize
                end += 1
            } while end < frames.endIndex && bytes + frames[end].wireSize <= deliverySliceBytes
            carryOut(session.deliver(frames[start..<end]))
            start = end
            if start < frames.endIndex, !isClosed { flush() }
        }
    }

    func tick(now: UInt64) {
        loop.assertInEventLoop()
        guard !isClosed else { return }
        carryOut(session.tick(now: now))
    }

    func beginDrain() {
        loop.assertInEventLoop()
        guard !isClosed else { return }
        carryOut(session.beginDrain())
    }

    func forceEndStreams() {
        loop.assertInEventLoop()
        guard !isClosed else { return }
        carryOut(session.forceEndStreams())
    }
}
