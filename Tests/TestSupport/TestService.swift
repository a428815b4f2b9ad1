internal import Glibc
public import ProtoBridge
public import RPCCore
public import RPCMessages
import Synchronization

/// Methods that exist only for tests, with handles to steer them: calls that stay in flight until
/// released, a method that blocks its worker, and two server streams.
///
/// Every method takes and returns the Echo messages, so no test protos are needed.
public final class TestService: Sendable {
    public static let name = "mrpc.test.v1.Test"
    /// Unary, on the worker pool: parks its responder until `releaseParked` (a call kept in flight).
    public static let park = ProtoMethod<EchoRequest, EchoResponse>(service: name, name: "Park", serverStreaming: false)
    /// Unary, on the worker pool: blocks its worker for the number of milliseconds in the first two
    /// payload bytes (big-endian), then echoes.
    public static let sleep = ProtoMethod<EchoRequest, EchoResponse>(
        service: name, name: "Sleep", serverStreaming: false)
    /// Unary, on the worker pool only for a non-empty payload (`offloadWhen`): answers with the
    /// name of the thread it ran on.
    public static let threadName = ProtoMethod<EchoRequest, EchoResponse>(
        service: name, name: "ThreadName", serverStreaming: false)
    /// Stream, on the loop: sends `payload[0]` compressible messages, then OK trailers.
    public static let count = ProtoMethod<EchoRequest, EchoResponse>(
        service: name, name: "Count", serverStreaming: true)
    /// Stream, on the loop: sends one message and stays open until the test ends it or the call is
    /// terminated; on `.draining` it finishes with UNAVAILABLE and `last_seq`.
    public static let follow = ProtoMethod<EchoRequest, EchoResponse>(
        service: name, name: "Follow", serverStreaming: true)

    private let state = Mutex<State>(State())
    private let sleepRuns = Atomic<Int>(0)

    private struct State {
        var parked: [(request: EchoRequest, responder: UnaryResponder<EchoResponse>)] = []
        var followers: [UInt32: ServerStream<EchoResponse>] = [:]
        var terminations: [UInt32: CallTermination] = [:]
        var sendResults: [UInt32: [ServerStream<EchoResponse>.SendResult]] = [:]
    }

    public init() {}

    /// Registers the test methods in `table`.
    public func register(in table: inout MethodTable) {
        table.addUnary(Self.park, executor: .workerPool) { [self] request, _, responder in
            responder.call.onTermination { [self] reason in record(reason, for: responder.call.streamID) }
            state.withLock { $0.parked.append((request, responder)) }
        }
        table.addUnary(Self.sleep, executor: .workerPool) { [self] request, _, responder in
            sleepRuns.add(1, ordering: .relaxed)
            let bytes = request.payload
            let ms = bytes.count >= 2 ? Int(bytes[0]) << 8 | Int(bytes[1]) : 0
            usleep(useconds_t(ms * 1_000))
            responder.succeed(EchoResponse(payload: request.payload))
        }
        table.addUnary(Self.threadName, executor: .workerPool, offloadWhen: { !$0.payload.isEmpty }) {
            _, _, responder in
            // The thread's name as the kernel knows it (Glibc's module lacks pthread_getname_np).
            var name = [UInt8](repeating: 0, count: 32)
            let fd = open("/proc/thread-self/comm", O_RDONLY)
            let count = fd < 0 ? 0 : max(0, read(fd, &name, name.count))
            if fd >= 0 { close(fd) }
            responder.succeed(EchoResponse(payload: Array(name[0..<count].prefix { $0 != 10 })))
        }
        table.addServerStream(Self.count) { request, _, stream in
            let count = Int(request.payload.first ?? 0)
            for seq in stride(from: 1, through: count, by: 1) {
                stream.send(EchoResponse(payload: Self.streamPayload(seq: seq)))
            }
            stream.finish()
        }
        table.addServerStream(Self.follow) { [self] _, _, stream in
            let id = stream.call.streamID
            state.withLock { $0.followers[id] = stream }
            stream.onTermination { [self] reason in
                record(reason, for: id)
                if reason == .draining {
                    stream.finish(
                        .unavailable("the server is shutting down", details: ["last_seq": String(stream.sentCount)]))
                }
            }
            send(on: id, seq: 1)
        }
    }

    /// The payload of message `seq` of a test stream: text that compresses well.
    public static func streamPayload(seq: Int) -> [UInt8] {
        Array("event \(seq): the quick brown fox jumps over the lazy dog; the quick brown fox jumps again".utf8)
    }

    // MARK: Parked calls

    /// Calls parked by `park` and not yet released.
    public var parkedCount: Int { state.withLock { $0.parked.count } }

    /// Waits until at least `count` calls are parked.
    public func waitForParked(_ count: Int, timeoutMs: Int = 5_000) -> Bool {
        waitUntil(timeoutMs: timeoutMs) { parkedCount >= count }
    }

    /// Answers every parked call with its own payload; returns how many there were.
    @discardableResult
    public func releaseParked() -> Int {
        let parked = state.withLock { state in
            defer { state.parked.removeAll() }
            return state.parked
        }
        for (request, responder) in parked { responder.succeed(EchoResponse(payload: request.payload)) }
        return parked.count
    }

    // MARK: Sleep

    /// How many times `sleep`'s handler has run.
    public var sleepRunCount: Int { sleepRuns.load(ordering: .relaxed) }

    /// The request payload asking `sleep` to block for `ms` milliseconds.
    public static func sleepPayload(ms: Int) -> [UInt8] { [UInt8(ms >> 8), UInt8(ms & 0xFF)] }

    // MARK: Followed streams

    /// The open `follow` stream with `streamID`, once its handler has run.
    public func follower(_ streamID: UInt32) -> ServerStream<EchoResponse>? {
        state.withLock { $0.followers[streamID] }
    }

    /// Sends message `seq` on a `follow` stream; returns what `send` said (nil when no such stream).
    @discardableResult
    public func send(on streamID: UInt32, seq: Int) -> ServerStream<EchoResponse>.SendResult? {
        guard let stream = follower(streamID) else { return nil }
        let result = stream.send(EchoResponse(payload: Self.streamPayload(seq: seq)))
        state.withLock { $0.sendResults[streamID, default: []].append(result) }
        return result
    }

    /// Why the call on `streamID` ended from outside, once it has.
    public func termination(of streamID: UInt32) -> CallTermination? {
        state.withLock { $0.terminations[streamID] }
    }

    /// Waits for the call on `streamID` to be terminated; returns the reason, or nil on timeout.
    public func waitForTermination(of streamID: UInt32, timeoutMs: Int = 5_000) -> CallTermination? {
        var reason: CallTermination?
        waitUntil(timeoutMs: timeoutMs) {
            reason = termination(of: streamID)
            return reason != nil
        }
        return reason
    }

    private func record(_ reason: CallTermination, for streamID: UInt32) {
        state.withLock { $0.terminations[streamID] = reason }
    }
}
