public import RPCCore
public import RPCMessages
import Synchronization

/// A `CallPort` that keeps what handlers send until the test hands it to the connection's core,
/// as a connection's loop would; its pending-bytes count is set by the test.
public final class FakeCallPort: CallPort {
    public struct Delivery: Sendable {
        public let streamID: UInt32
        public let part: ResponsePart
    }

    private let queue = Mutex<[Delivery]>([])
    private let pending = Atomic<Int>(0)
    private let takenIn = Atomic<Int>(0)

    public init() {}

    public func send(streamID: UInt32, _ part: ResponsePart) {
        queue.withLock { $0.append(Delivery(streamID: streamID, part: part)) }
    }

    public var pendingBytes: Int { pending.load(ordering: .relaxed) }

    /// Never "on the loop": every completion goes through `send`, where the test sees it.
    public func replyOnLoop(streamID: UInt32, _ write: MessageWriter) -> Bool { false }

    public func largeRequestTakenIn() { takenIn.add(1, ordering: .relaxed) }

    /// How many large requests were reported taken in since the last call (the harness hands
    /// each to the session after the deliveries, as the loop's inbox would).
    public func takeLargeRequestsTakenIn() -> Int { takenIn.exchange(0, ordering: .relaxed) }

    /// Sets what `pendingBytes` reports (a connection whose peer does not read).
    public func setPendingBytes(_ bytes: Int) { pending.store(bytes, ordering: .relaxed) }

    /// Removes and returns the deliveries so far.
    public func take() -> [Delivery] {
        queue.withLock { queue in
            defer { queue.removeAll() }
            return queue
        }
    }
}

/// Work handed to the worker pool, run when the test says so.
public final class ManualOffload: Sendable {
    private let queue = Mutex<[@Sendable () -> Void]>([])

    public init() {}

    public func submit(_ work: @escaping @Sendable () -> Void) { queue.withLock { $0.append(work) } }

    public var count: Int { queue.withLock { $0.count } }

    /// Runs every queued piece of work; returns how many ran.
    @discardableResult
    public func runAll() -> Int {
        let work = queue.withLock { queue in
            defer { queue.removeAll() }
            return queue
        }
        for item in work { item() }
        return work.count
    }
}

/// A connection's core on our framed protocol, driven by bytes, with a fake port, a manual clock
/// and a manual worker pool: every protocol rule can be checked with no socket and no thread.
///
/// `receive` plays the transport: it keeps bytes the core did not consume, and after each step
/// hands the core what handlers sent (as the loop would). `frames()` takes what the core wrote
/// so far, parsed.
public final class SessionHarness {
    public let core: ConnectionCore
    public let port = FakeCallPort()
    public let clock: ManualClock
    public let offload = ManualOffload()
    public let service = TestService()
    /// Deadlines the session asked the transport to arm, in order.
    public private(set) var deadlines: [(deadline: UInt64, streamID: UInt32)] = []
    /// What the session asked of the transport after the last bytes or delivery the harness fed it.
    public private(set) var lastActions = TransportActions()
    private var inbound: [UInt8] = []
    /// What the session said the next frame needs in all, after the last `receive`.
    public private(set) var needed = 0

    /// - Parameters:
    ///   - peer: the peer's address as the transport names it ("HOST:PORT").
    ///   - configure: changes to the session's environment (memory budget, per-app cap, throttle).
    public init(
        limits: ServerLimits = ServerLimits(), clock: ManualClock = ManualClock(), logger: Logger = .disabled,
        peer: String = "test-peer", register: (inout MethodTable) -> Void = { _ in },
        configure: (inout ServerEnvironment) -> Void = { _ in }
    ) {
        self.clock = clock
        var methods = MethodTable()
        service.register(in: &methods)
        register(&methods)
        RuntimeServices.register(
            in: &methods, health: HealthStatus(), fileDescriptorSets: [RPCSchema.fileDescriptorSet])
        let offload = self.offload
        var environment = ServerEnvironment(
            serverName: "test-server", serverVersion: "9.9.9", limits: limits, methods: methods,
            authenticator: TestKeys(), logger: logger, offload: { offload.submit($0) }, now: { [clock] in clock.now })
        configure(&environment)
        core = ConnectionCore(environment: environment, port: port, peer: peer)
    }

    /// The harness plays the transport: when it goes, so does the connection, and calls still
    /// live end as they would (their termination handlers run, and release what they capture).
    deinit {
        core.connectionClosed()
    }

    /// Feeds bytes as the transport would, then delivers what handlers completed.
    /// - Parameter outboundLimit: the transport's backpressure (see `ConnectionCore.receive`).
    public func receive(_ bytes: [UInt8], outboundLimit: Int = .max) {
        inbound += bytes
        let (consumed, next, actions) = inbound.withUnsafeBytes { core.receive($0, outboundLimit: outboundLimit) }
        inbound.removeFirst(consumed)
        needed = next
        record(actions)
        pump()
    }

    /// Hands the core every part handlers sent so far.
    public func pump() {
        for delivery in port.take() {
            record(core.deliver(streamID: delivery.streamID, delivery.part))
        }
        for _ in 0..<port.takeLargeRequestsTakenIn() { record(core.largeRequestTakenIn()) }
    }

    /// Keeps the deadline timers the session asks for; what it writes stays in `outbound`, and
    /// whether it closes in `closeRequested`, for the test to look at.
    private func record(_ actions: TransportActions) {
        lastActions = actions
        if let timer = actions.armDeadlineTimer { deadlines.append((timer.deadline, timer.streamID)) }
    }

    /// Runs the work offloaded to the "worker pool", then delivers its results.
    @discardableResult
    public func runWorkers() -> Int {
        let count = offload.runAll()
        pump()
        return count
    }

    /// Bytes received that the session has not consumed (an incomplete frame).
    public var unconsumed: Int { inbound.count }

    /// The frames the session wrote since the last call, parsed; clears `outbound`.
    public func frames() throws -> [RawFrame] {
        let frames = try FrameParser.frames(in: core.outbound)
        core.outbound.removeAll()
        return frames
    }

    /// The one frame the session wrote since the last call.
    public func onlyFrame() throws -> RawFrame {
        let frames = try frames()
        guard frames.count == 1 else { throw TestFailure("expected one frame, got \(frames)") }
        return frames[0]
    }

    /// Sends the preface and HELLO and returns the HELLO_ACK.
    @discardableResult
    public func handshake(apiKey: String = Frames.apiKey, acceptDeflate: Bool = false) throws -> HelloAck {
        receive(Frames.opening(apiKey: apiKey, acceptDeflate: acceptDeflate))
        return try onlyFrame().helloAck()
    }

    /// Sends one CALL and returns its REPLY (the only frame the session wrote).
    public func reply(to call: [UInt8]) throws -> RawFrame {
        receive(call)
        let frame = try onlyFrame()
        guard frame.type == .reply else { throw TestFailure("expected a REPLY, got \(frame)") }
        return frame
    }

    /// The GOAWAY the session wrote as its last frame, checking that it asked to close.
    public func expectGoawayAndClose() throws -> Goaway {
        let frames = try frames()
        guard let last = frames.last, last.type == .goaway else { throw TestFailure("expected GOAWAY, got \(frames)") }
        guard core.closeRequested else { throw TestFailure("GOAWAY was sent but the core did not ask to close") }
        return try last.goaway()
    }
}
