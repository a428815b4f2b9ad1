import FuzzSupport
import ProtoBridge
import RPCCore
import RPCMessages
import Synchronization

/// Plays the transport and the event loop for one connection's `ConnectionCore` (our framed wire:
/// the server it drives serves no gRPC): feeds reads, runs offloaded work, delivers completions,
/// fires timers, and checks every byte the core writes.
final class SessionDriver {
    let session: ConnectionCore
    let clock = FuzzClock()
    private let port = QueuePort()
    private let offload = WorkQueue()
    private var inbound: [UInt8] = []
    private var written: [UInt8] = []

    init(methods: MethodTable) {
        var limits = ServerLimits()
        // Small enough that the fuzzer can reach the limits with short inputs.
        limits.maxMessageBytes = 64 * 1024
        limits.maxCallHeaderBytes = 1024
        limits.maxConcurrentCalls = 16
        limits.streamPendingLimitBytes = 4096
        let offload = self.offload
        let clock = self.clock
        let environment = ServerEnvironment(
            serverName: "fuzz-server", serverVersion: "0", limits: limits, methods: methods,
            authenticator: FuzzAuthenticator(), logger: .disabled,
            offload: { offload.submit($0) }, now: { clock.now })
        session = ConnectionCore(environment: environment, port: port, peer: "fuzz-peer")
    }

    /// One read from the socket, then what the loop does before the next one.
    func feed(_ bytes: [UInt8]) {
        guard !session.closeRequested else { return }
        inbound += bytes
        let (consumed, _, actions) = inbound.withUnsafeBytes { session.receive($0) }
        fuzzCheck(consumed >= 0 && consumed <= inbound.count, "consumed \(consumed) of \(inbound.count) bytes")
        inbound.removeFirst(consumed)
        check(actions)
        runLoopTurn()
    }

    /// Time passes (deadlines, idle and keepalive timers), the server drains, the peer goes away.
    func finish() {
        clock.advance(ms: 30_000)
        check(session.expireDeadlines(now: clock.now))
        check(session.tick(now: clock.now))
        runLoopTurn()
        clock.advance(ms: 400_000)
        check(session.tick(now: clock.now))
        check(session.beginDrain())
        runLoopTurn()
        check(session.forceEndStreams())
        runLoopTurn()
        session.connectionClosed()
        // Work still queued completes after the connection is gone, as on a real worker pool.
        runLoopTurn()
        checkOutput(final: true)
    }

    private func runLoopTurn() {
        while offload.runAll() > 0 || port.hasDeliveries {
            for delivery in port.take() {
                check(session.deliver(streamID: delivery.streamID, delivery.part))
            }
            for _ in 0..<port.takeLargeRequestsTakenIn() { check(session.largeRequestTakenIn()) }
        }
        checkOutput(final: false)
    }

    /// What the session tells the transport agrees with its state: it asks to write exactly when
    /// it has output, to close exactly when it will close, and for deadline timers in the future.
    private func check(_ actions: TransportActions) {
        fuzzCheck(
            actions.write == !session.outbound.isEmpty,
            "write \(actions.write) with \(session.outbound.count) bytes to write")
        fuzzCheck(
            actions.close == session.closeRequested,
            "close \(actions.close) but closeRequested \(session.closeRequested)")
        if let timer = actions.armDeadlineTimer {
            fuzzCheck(
                timer.deadline > clock.now, "a deadline timer asked for \(timer.deadline), not after now (\(clock.now))"
            )
        }
    }

    /// The session's output, written to the "socket": a sequence of whole, well-formed frames.
    private func checkOutput(final: Bool) {
        written += session.outbound
        session.outbound.removeAll()
        var parser = OutputChecker(bytes: written)
        parser.check()
        written.removeFirst(parser.consumed)
        if final {
            fuzzCheck(written.isEmpty, "the session's output ends with \(written.count) bytes of an incomplete frame")
        }
    }
}

/// A monotonic clock moved by the driver (nanoseconds).
final class FuzzClock: Sendable {
    private let value = Atomic<UInt64>(1_000_000_000)

    var now: UInt64 { value.load(ordering: .relaxed) }

    func advance(ms: Int) { value.add(UInt64(ms) * 1_000_000, ordering: .relaxed) }
}

/// A `CallPort` that queues response parts for the driver to hand to the core.
final class QueuePort: CallPort {
    struct Delivery {
        let streamID: UInt32
        let part: ResponsePart
    }

    private let queue = Mutex<[Delivery]>([])
    private let takenIn = Atomic<Int>(0)

    func send(streamID: UInt32, _ part: ResponsePart) {
        queue.withLock { $0.append(Delivery(streamID: streamID, part: part)) }
    }

    func largeRequestTakenIn() { takenIn.add(1, ordering: .relaxed) }

    /// How many large requests were reported taken in since the last call.
    func takeLargeRequestsTakenIn() -> Int { takenIn.exchange(0, ordering: .relaxed) }

    var pendingBytes: Int {
        queue.withLock { $0.reduce(0) { $0 + OutgoingPart(streamID: $1.streamID, $1.part).wireSize } }
    }

    func replyOnLoop(streamID: UInt32, _ write: MessageWriter) -> Bool { false }

    var hasDeliveries: Bool { queue.withLock { !$0.isEmpty } }

    func take() -> [Delivery] {
        queue.withLock { queue in
            defer { queue.removeAll() }
            return queue
        }
    }
}

/// Work "offloaded to the worker pool", run by the driver between reads.
final class WorkQueue: Sendable {
    private let queue = Mutex<[@Sendable () -> Void]>([])

    func submit(_ work: @escaping @Sendable () -> Void) { queue.withLock { $0.append(work) } }

    /// Runs what is queued; returns how many pieces of work ran.
    func runAll() -> Int {
        let work = queue.withLock { queue in
            defer { queue.removeAll() }
            return queue
        }
        for item in work { item() }
        return work.count
    }
}
