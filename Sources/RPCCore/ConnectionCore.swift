/// One server connection, whichever wire it speaks: its lifecycle, its calls, and every rule the
/// wires share.
///
/// The transport hands the core the connection's events — bytes read, completions, the timer
/// tick, the deadline timer, drain, close — and carries out the `TransportActions` each returns;
/// the core touches no socket. Where the connection is in its life is one value, the
/// `ConnectionStateMachine`. Which wire it speaks is decided by its first bytes (`WireSniffer`) or
/// by TLS's ALPN, and from then on a `WireCodec` turns the wire's bytes into calls and the calls'
/// response parts into the wire's bytes. Everything between — authentication and its throttled
/// log, admission, a call's head counted and bounded, deadlines, the time a request has to
/// arrive, cancellation, large requests off the loop, keepalive, idle, drain, close, the access
/// log's records — is here, once, so the two wires cannot drift apart.
///
/// Confined to its connection's event loop; completions from other threads reach it through the
/// `CallPort`, which brings them back to the loop.
public final class ConnectionCore {
    /// One call the connection has open.
    struct LiveCall {
        let call: ServerCall
        let isStream: Bool
        var deadline: UInt64?
        /// Bytes its head holds, counted in `heldHeadBytes`.
        let headBytes: Int
        /// Its request is still arriving (a gRPC stream not yet ended): no handler runs yet.
        var receiving: Bool
        /// The wire serves it itself (gRPC's bidirectional reflection), not a handler.
        let servedByWire: Bool
    }

    /// Bytes to write to the peer, in order; the transport removes what it has written.
    public var outbound: [UInt8] = []

    public let environment: ServerEnvironment
    public let limits: ServerLimits
    public let port: any CallPort
    /// The peer's address, "HOST:PORT".
    public let peer: String
    /// The wire's logger: the peer, the wire, and the app once known.
    public internal(set) var logger: Logger
    /// The time of the current event (read once per batch of input, or given by the timer).
    public internal(set) var now: UInt64 = 0
    /// The wire's codec, once the connection's first bytes (or ALPN) chose it.
    public private(set) var codec: (any WireCodec)?
    /// Its wire, kept for the calls' records (our protocol's until one is chosen).
    private(set) var wireKind = WireKind.mrpc

    var machine: ConnectionStateMachine
    var calls = StreamIDMap<LiveCall>()
    /// Calls of the closed connection not yet ended (`endClosedCalls`).
    var callsToEnd = CallsToEnd()
    /// The highest stream id a call was opened or refused on: what GOAWAY names.
    public internal(set) var lastStreamID: UInt32 = 0
    /// Bytes the calls in flight hold — their heads, and `callStateBytes` each for their own
    /// records — against `maxHeldHeadBytes`, and in the memory budget.
    public internal(set) var heldHeadBytes = 0
    /// What an open call's own records take besides its head: the live call, its `ServerCall` and
    /// context, the codec's stream (measured: about 1 KiB). Counted, so that streams opened and
    /// never ended cannot hold more than the budget says.
    public static let callStateBytes = 1024
    /// Calls whose request is still arriving, oldest first, with when their head came (entries
    /// of calls no longer receiving are skipped): what the request timeout walks.
    var receivingOrder: [(streamID: UInt32, since: UInt64)] = []
    var receivingStart = 0
    /// The deadline the transport's one deadline timer is armed for (`.max`: none asked for).
    var armedDeadline: UInt64 = .max
    /// When the current `receive` stops decoding (`inputTimeNanoseconds` after it began).
    var inputDeadline: UInt64 = .max
    /// A move of the deadline timer asked for during the current event, returned with its actions.
    var deadlineToArm: TransportActions.DeadlineTimer?
    /// The app the connection authenticated as first (empty before, or without a key).
    public internal(set) var authenticatedApp = ""
    /// True once the app's connection count includes this connection (released when it closes).
    var countedInApp = false
    /// The last key that authenticated, and its app: a gRPC connection sends the same key on
    /// every request, and the key store's constant-time check need not run again for it.
    /// Stored as plain strings (an optional tuple of them is copied field by field on each check);
    /// an empty `lastAPIKey` means none yet.
    var lastAPIKey = ""
    var lastAppID = ""
    var lastApp = ""
    /// The method the last admitted call called (see `admit`).
    var lastMethod: RegisteredMethod?
    /// A request of this connection is being taken in on the large-request pool: no further
    /// input is decoded until it has been (`largeRequestTakenIn`), so one connection has at most
    /// one such request, and its inflated body, off the loop at a time.
    public internal(set) var awaitsLargeRequest = false

    /// - Parameter wire: the wire, when the transport already knows it (a listener of one wire, a
    ///   test); nil: the first bytes say.
    public init(environment: ServerEnvironment, port: any CallPort, peer: String, wire: WireKind? = nil) {
        self.environment = environment
        limits = environment.limits
        self.port = port
        self.peer = peer
        logger = environment.logger.with("peer", peer)
        machine = ConnectionStateMachine(openedAt: environment.now(), limits: environment.limits)
        if let wire { attach(wire) }
    }

    /// The peer's address without its port: what failed handshakes are counted by.
    var peerAddress: String {
        guard let colon = peer.lastIndex(of: ":") else { return peer }
        return String(peer[..<colon])
    }

    /// The wire the connection speaks, once known.
    public var wire: WireKind? { codec?.wire }

    /// Calls and streams in flight.
    public var liveCallCount: Int { calls.count }

    /// True once the connection should close after its output is written (or has closed).
    public var closeRequested: Bool { machine.closeRequested || (codec?.wantsClose ?? false) }

    /// True while new calls are refused and those in flight finish.
    public var isDraining: Bool { machine.isDraining }

    /// True while input is decoded: before the connection closes.
    public var isReading: Bool { machine.isReading }

    /// Where the connection is in its life.
    public var state: ConnectionStateMachine.State { machine.state }

    /// Output the peer has not taken: what waits in `outbound` and what the wire holds unsent.
    public var pendingOutput: Int { outbound.count + (codec?.queuedBytes ?? 0) }

    /// Response bytes the wire holds unsent for its streams (see `WireCodec.queuedBytes`).
    public var queuedBytes: Int { codec?.queuedBytes ?? 0 }

    /// Bytes the connection's calls and wire state hold for the peer: their heads, and the wire's
    /// own records (HPACK tables, streams). Counted in the memory budget with its input.
    public var heldBytes: Int { heldHeadBytes + (codec?.stateBytes ?? 0) }

    /// True when the wire has output `takeOutput` would move into `outbound`.
    public var hasPendingOutput: Bool { codec?.hasPendingOutput ?? false }

    /// Moves what the wire has to send into `outbound` (once per loop turn, before writing).
    public func takeOutput() { codec?.takeOutput() }

    // MARK: Input

    /// How long one `receive` decodes frames before it leaves the rest to the transport's next
    /// turn: a bystander on the same loop waits for at most this much of any one connection.
    public static let inputTimeNanoseconds: UInt64 = 2_000_000

    /// True once the current `receive` has decoded for `inputTimeNanoseconds`; its codec asks
    /// every 16 frames (one clock read each time).
    public func inputTimeSpent(afterFrames frames: Int) -> Bool {
        frames & 15 == 15 && environment.now() >= inputDeadline
    }

    /// Whether a codec's `receive` may decode another frame after `frames` of them: not once the
    /// output passed `outboundLimit` or `frameLimit` frames are done, while a large request is
    /// taken in, or once `inputTimeNanoseconds` are spent (see `receive`). A stop leaves the
    /// input held back, not late: the frame timeout does not run for what the server holds.
    public func mayDecodeFrame(after frames: Int, outboundLimit: Int, frameLimit: Int) -> Bool {
        guard
            pendingOutput <= outboundLimit && frames < frameLimit && !awaitsLargeRequest
                && !inputTimeSpent(afterFrames: frames)
        else {
            inputLeft(incomplete: false)
            return false
        }
        return true
    }

    /// Decodes every whole unit of the wire at the start of `bytes`, stopping early once the
    /// connection's output (`pendingOutput`) passes `outboundLimit`: the transport's backpressure,
    /// checked before each frame, so a peer that pipelines calls with large replies cannot make
    /// one batch of input hold more than the limit and one reply. The bytes not consumed stay
    /// with the transport until it feeds them again. It also stops after `frameLimit` frames, so
    /// the transport can share its thread out among connections, or after `inputTimeNanoseconds`
    /// of decoding (frames that each cost much — large heads — are few enough for a frame count to
    /// bound an event's time), and while a large request of the connection is taken in off the
    /// loop (`awaitsLargeRequest`).
    /// - Returns: the bytes consumed; how many bytes the next unit needs in all when known (0
    ///   when unknown, or when it stopped early), so the transport can make room for it; and what
    ///   the transport does.
    public func receive(
        _ bytes: UnsafeRawBufferPointer, outboundLimit: Int = .max, frameLimit: Int = .max
    ) -> (consumed: Int, needed: Int, actions: TransportActions) {
        now = environment.now()
        inputDeadline = now &+ Self.inputTimeNanoseconds
        if codec == nil {
            switch WireSniffer.identify(bytes) {
            case .needMore: return (0, WireSniffer.decidingBytes, transportActions())
            case .mrpc: attach(.mrpc)
            case .http2, .http1: attach(environment.grpc == nil ? .mrpc : .grpc)
            }
        }
        guard let codec, machine.isReading else { return (bytes.count, 0, transportActions()) }
        let (consumed, needed) = codec.receive(bytes, outboundLimit: outboundLimit, frameLimit: frameLimit)
        if codec.wantsClose { perform(machine.wireEnded()) }
        return (machine.isReading ? consumed : bytes.count, needed, transportActions())
    }

    /// TLS chose the wire (ALPN `h2` or `mrpc/1`) before any byte of it arrived; nil leaves it to
    /// the first bytes.
    public func transportNegotiated(applicationProtocol: String?) {
        guard codec == nil, let applicationProtocol else { return }
        switch applicationProtocol {
        case "h2" where environment.grpc != nil: attach(.grpc)
        case "mrpc/1": attach(.mrpc)
        default: break
        }
    }

    private func attach(_ wire: WireKind) {
        switch wire {
        case .mrpc: codec = FramedCodec(core: self)
        case .grpc:
            guard let factory = environment.grpc else { return attach(.mrpc) }
            codec = factory.makeCodec(for: self)
        }
        wireKind = wire
        logger = logger.with("wire", wire.rawValue)
    }

    /// A whole unit of input arrived (any frame): the peer is alive.
    public func inboundFrame() {
        machine.inbound(at: now)
    }

    /// After the bytes fed so far: whether they end inside a frame (see
    /// `ConnectionStateMachine.inputLeft`).
    public func inputLeft(incomplete: Bool) {
        machine.inputLeft(incomplete: incomplete, at: now)
    }

    /// The peer broke the wire's protocol, or was refused for good: GOAWAY with `error`, then
    /// close.
    public func fail(_ error: RPCError) {
        perform(machine.failed(error))
    }

    /// A handshake refused for another reason than its key, counted for the wire.
    public func handshakeRefused(_ reason: TransportEvent.HandshakeRefusal) {
        environment.observer?.transportEvent(.handshakeRefused(reason, wire ?? .mrpc))
    }

    /// What the transport does after the current event.
    func transportActions() -> TransportActions {
        defer { deadlineToArm = nil }
        let pending = !outbound.isEmpty || (codec?.hasPendingOutput ?? false)
        return TransportActions(write: pending, close: closeRequested, armDeadlineTimer: deadlineToArm)
    }
}

/// Per-thread inflate context for compressed request bodies.
enum CompressionScratch {
    static func inflater(_ format: CompressionFormat) -> Inflater { MessageCompression.inflater(format) }
}
