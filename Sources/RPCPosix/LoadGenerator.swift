internal import CSystemShims
internal import Glibc
import ProtoBridge
public import RPCCore
import RPCMessages
import Synchronization
import ThreadSupport

/// What a load run does: which call, how many connections and calls in flight, for how long.
public struct LoadConfiguration: Sendable {
    public var client = ClientOptions()
    /// Method path, e.g. "/mrpc.diagnostics.v1.Diagnostics/Echo".
    public var path = ""
    /// Encoded request bodies, used round-robin (one body is the common case).
    public var bodies: [[UInt8]] = [[]]
    public var callOptions = CallOptions()
    public var connections = 1
    /// Calls in flight per connection.
    public var depth = 1
    /// Length of the measured part, in seconds (ignored when `total` is set).
    public var durationSeconds = 10.0
    /// Stop after this many measured calls instead of after a duration.
    public var total: Int?
    /// Seconds of load before measuring starts.
    public var warmupSeconds = 0.0
    /// Calls per second across all connections; nil means as fast as replies come back.
    public var rate: Double?
    /// Client threads; connections are spread over them.
    public var threads = 1

    public init() {}
}

/// What a load run measured.
public struct LoadReport: Sendable {
    public var calls: UInt64 = 0
    public var durationSeconds = 0.0
    public var latency = LatencyHistogram()
    /// Calls by outcome: "OK", or the status name and error code ("NOT_FOUND ERR_GROUP_NOT_FOUND").
    public var outcomes: [String: UInt64] = [:]
    /// Connection-level failures (connect, handshake, closed by the server).
    public var connectionErrors: [String] = []
    /// CPU time the client process spent per measured call, in nanoseconds.
    public var clientCPUNanosecondsPerCall = 0.0

    public var callsPerSecond: Double { durationSeconds > 0 ? Double(calls) / durationSeconds : 0 }
}

/// A ghz-class load generator over the MRPC protocol.
///
/// Built to cost the client less CPU per call than the server spends: each request's CALL
/// payload (CallHeader and body) is encoded once up front, so a call is a 12-byte header plus a
/// copy; connections are non-blocking sockets on one epoll per client thread; every reply read in
/// a turn is answered with its next call and all of them go out in one write.
public enum LoadGenerator {
    public static func run(_ configuration: LoadConfiguration) throws(RPCError) -> LoadReport {
        precondition(!configuration.bodies.isEmpty && configuration.connections > 0 && configuration.depth > 0)
        let header = CallHeader(
            method: configuration.path, timeoutMs: configuration.callOptions.timeoutMs,
            onBehalfOf: configuration.callOptions.onBehalfOf, idempotencyKey: configuration.callOptions.idempotencyKey,
            requestID: configuration.callOptions.requestID, metadata: configuration.callOptions.metadata,
            acceptEncodings: configuration.callOptions.acceptDeflate ? ["deflate"] : [])
        let payloads: [[UInt8]] = configuration.bodies.map { body in
            var payload: [UInt8] = []
            BigEndian.append(0, to: &payload)
            let length = header.encode(appendingTo: &payload)
            BigEndian.store(UInt32(length), in: &payload, at: 0)
            payload += body
            return payload
        }
        var connections: [LoadConnection] = []
        for _ in 0..<configuration.connections {
            connections.append(try LoadConnection.open(configuration.client))
        }
        let threadCount = max(1, min(configuration.threads, connections.count))
        let start = monotonicNow()
        let warmupEnd = start + UInt64(configuration.warmupSeconds * 1e9)
        let shared = SharedRun(
            warmupEnd: warmupEnd,
            measureEnd: configuration.total == nil ? warmupEnd + UInt64(configuration.durationSeconds * 1e9) : .max,
            total: configuration.total)
        let perConnectionInterval: UInt64? = configuration.rate.map {
            UInt64(1e9 * Double(configuration.connections) / max($0, 0.001))
        }
        var groups = [[LoadConnection]](repeating: [], count: threadCount)
        for (i, connection) in connections.enumerated() { groups[i % threadCount].append(connection) }
        let cpuBefore = processCPUNanoseconds()
        let results = Mutex<[ThreadResult]>([])
        var threads: [WorkerThread] = []
        for (index, group) in groups.enumerated() {
            let worker = LoadThread(
                connections: group, payloads: payloads, depth: configuration.depth,
                interval: perConnectionInterval, shared: shared, bodyOffset: index)
            threads.append(
                WorkerThread(name: "load-\(index)") {
                    let result = worker.run()
                    results.withLock { $0.append(result) }
                })
        }
        for thread in threads { thread.join() }
        let cpu = processCPUNanoseconds() - cpuBefore
        var report = LoadReport()
        let measuredStart = shared.measureStart
        report.durationSeconds = Double(max(shared.measureStop, measuredStart) - measuredStart) / 1e9
        for result in results.withLock({ $0 }) {
            report.latency.merge(result.latency)
            for (key, value) in result.outcomes { report.outcomes[key, default: 0] += value }
            report.connectionErrors += result.errors
        }
        report.calls = report.latency.count
        report.clientCPUNanosecondsPerCall =
            report.calls > 0 ? Double(cpu) / Double(report.calls + shared.warmupCalls) : 0
        return report
    }
}

/// Run-wide timing shared by the client threads.
private final class SharedRun: Sendable {
    let warmupEnd: UInt64
    let measureEnd: UInt64
    let total: Int?
    private let measured = Atomic<Int>(0)
    private let warmup = Atomic<Int>(0)
    private let stopAt = Atomic<UInt64>(0)

    init(warmupEnd: UInt64, measureEnd: UInt64, total: Int?) {
        self.warmupEnd = warmupEnd
        self.measureEnd = measureEnd
        self.total = total
    }

    var measureStart: UInt64 { warmupEnd }
    var measureStop: UInt64 { stopAt.load(ordering: .acquiring) }
    var warmupCalls: UInt64 { UInt64(warmup.load(ordering: .relaxed)) }

    /// Counts a completed call; returns whether it is measured and whether the run is over.
    func complete(at now: UInt64) -> (measured: Bool, done: Bool) {
        if now < warmupEnd {
            warmup.add(1, ordering: .relaxed)
            return (false, false)
        }
        if let total {
            let n = measured.add(1, ordering: .relaxed).newValue
            if n == total { stopAt.store(now, ordering: .releasing) }
            return (n <= total, n >= total)
        }
        if now >= measureEnd {
            _ = stopAt.compareExchange(expected: 0, desired: measureEnd, ordering: .acquiringAndReleasing)
            return (false, true)
        }
        return (true, false)
    }

    var isOver: Bool { stopAt.load(ordering: .acquiring) != 0 }
}

private struct ThreadResult: Sendable {
    var latency = LatencyHistogram()
    var outcomes: [String: UInt64] = [:]
    var errors: [String] = []
}

/// One client thread: its connections on one epoll.
private final class LoadThread: @unchecked Sendable {
    // Invariant: used by exactly one thread after construction.
    private let connections: [LoadConnection]
    private let payloads: [[UInt8]]
    private let depth: Int
    private let interval: UInt64?
    private let shared: SharedRun
    private var bodyIndex: Int
    private var result = ThreadResult()

    init(
        connections: [LoadConnection], payloads: [[UInt8]], depth: Int, interval: UInt64?, shared: SharedRun,
        bodyOffset: Int
    ) {
        self.connections = connections
        self.payloads = payloads
        self.depth = depth
        self.interval = interval
        self.shared = shared
        bodyIndex = bodyOffset
    }

    func run() -> ThreadResult {
        let epoll = cshim_epoll_create()
        defer { close(epoll) }
        let now = monotonicNow()
        for (index, connection) in connections.enumerated() {
            _ = cshim_set_nonblocking(connection.fd, 1)
            _ = cshim_epoll_ctl(epoll, EPOLL_CTL_ADD, connection.fd, 0x001, UInt64(index))
            connection.nextSend = now
            fill(connection, now: now)
            connection.flush()
        }
        let events = UnsafeMutablePointer<UInt32>.allocate(capacity: 64)
        let data = UnsafeMutablePointer<UInt64>.allocate(capacity: 64)
        defer {
            events.deallocate()
            data.deallocate()
        }
        var open = connections.count
        while open > 0 {
            if shared.isOver && connections.allSatisfy({ $0.inFlight == 0 || $0.closed }) { break }
            let timeout: Int32 = interval == nil ? 100 : 1
            let count = cshim_epoll_wait(epoll, events, data, 64, timeout)
            let now = monotonicNow()
            if shared.isOver && now > shared.measureStop + 2_000_000_000 { break } // stragglers
            for i in 0..<Int(max(count, 0)) {
                let connection = connections[Int(data[i])]
                guard !connection.closed else { continue }
                if events[i] & 0x001 != 0 || events[i] & (0x008 | 0x010) != 0 {
                    if !read(connection) {
                        connection.closed = true
                        open -= 1
                        _ = cshim_epoll_ctl(epoll, EPOLL_CTL_DEL, connection.fd, 0, 0)
                        continue
                    }
                }
            }
            for (index, connection) in connections.enumerated() where !connection.closed {
                if interval != nil { fill(connection, now: now) }
                let wasBlocked = connection.writeBlocked
                connection.flush()
                if connection.writeBlocked != wasBlocked {
                    // Wait for writability only while a write is unfinished (level-triggered).
                    let events: UInt32 = connection.writeBlocked ? 0x001 | 0x004 : 0x001
                    _ = cshim_epoll_ctl(epoll, EPOLL_CTL_MOD, connection.fd, events, UInt64(index))
                }
            }
        }
        for connection in connections { close(connection.fd) }
        return result
    }

    /// Reads everything available and answers each reply; false when the connection is gone.
    /// The registration is level-triggered, so a read that leaves room in the buffer has drained
    /// the socket for now and ends the turn (no extra read only to see `EAGAIN`).
    private func read(_ connection: LoadConnection) -> Bool {
        while true {
            let room = connection.inputRoom
            let n = connection.readAvailable()
            if n == 0 {
                if !shared.isOver { result.errors.append("the server closed a connection") }
                return false
            }
            if n < 0 { return true }
            let now = monotonicNow()
            connection.parseFrames { type, streamID, payload in
                guard type == FrameType.reply.rawValue, let sent = connection.sendTimes.removeValue(forKey: streamID)
                else {
                    if type == FrameType.goaway.rawValue { result.errors.append("the server sent GOAWAY") }
                    return
                }
                connection.inFlight -= 1
                let (measured, _) = shared.complete(at: now)
                if measured {
                    result.latency.record(nanoseconds: now - sent)
                    result.outcomes[Self.outcome(payload), default: 0] += 1
                }
                if !shared.isOver && interval == nil { issue(connection, now: now) }
            }
            if n < room { return true }
        }
    }

    private func fill(_ connection: LoadConnection, now: UInt64) {
        while connection.inFlight < depth && !shared.isOver {
            if let interval {
                guard now >= connection.nextSend else { return }
                connection.nextSend += interval
            }
            issue(connection, now: now)
        }
    }

    private func issue(_ connection: LoadConnection, now: UInt64) {
        let payload = payloads[bodyIndex % payloads.count]
        bodyIndex &+= 1
        connection.appendCall(payload: payload, now: now)
    }

    private static func outcome(_ payload: UnsafeRawBufferPointer) -> String {
        guard payload.count >= 4 else { return "MALFORMED_REPLY" }
        let statusLength = Int(BigEndian.readUInt32(payload))
        guard statusLength > 0 else { return "OK" }
        guard statusLength <= payload.count - 4,
            let status = try? Status(serializedBytes: UnsafeRawBufferPointer(rebasing: payload[4..<4 + statusLength]))
        else {
            return "MALFORMED_REPLY"
        }
        let code = StatusCode(rawValue: status.code).name
        return status.errorCode.isEmpty ? code : "\(code) \(status.errorCode)"
    }
}

/// One load connection: a socket after the handshake, its buffers and calls in flight.
private final class LoadConnection: @unchecked Sendable {
    // Invariant: used by one thread at a time (opened by the caller, then owned by a LoadThread).
    let fd: Int32
    var inFlight = 0
    var closed = false
    var nextSend: UInt64 = 0
    var sendTimes: [UInt32: UInt64] = [:]
    private var nextStreamID: UInt32 = 1
    private var output: [UInt8] = []
    private var written = 0
    private let input: UnsafeMutableRawBufferPointer
    private var inputCount = 0

    private init(fd: Int32, leftover: [UInt8]) {
        self.fd = fd
        input = .allocate(byteCount: 8 * 1024 * 1024, alignment: 16)
        leftover.withUnsafeBytes { input.copyMemory(from: $0) }
        inputCount = leftover.count
        output.reserveCapacity(256 * 1024)
    }

    deinit { input.deallocate() }

    /// Connects and completes the handshake (blocking).
    static func open(_ options: ClientOptions) throws(RPCError) -> LoadConnection {
        let fd = options.host.withCString { cshim_connect($0, options.port, Int32(options.connectTimeoutMs)) }
        guard fd >= 0 else {
            throw .unavailable("cannot connect to \(options.host):\(options.port): \(String(cString: strerror(-fd)))")
        }
        _ = cshim_set_nodelay(fd)
        var out = Preface.bytes
        FrameWriter.hello(
            Hello(apiKey: options.apiKey, clientName: options.clientName, appID: options.appID), into: &out)
        do throws(RPCError) {
            try ClientConnection.sendAll(fd, out)
            var buffer: [UInt8] = []
            let deadline = monotonicNow() + UInt64(options.connectTimeoutMs) * 1_000_000
            while monotonicNow() < deadline {
                if let (header, payload) = try ClientConnection.nextFrame(&buffer, limit: 1 << 20) {
                    if header.type == .helloAck { return LoadConnection(fd: fd, leftover: buffer) }
                    if header.type == .goaway {
                        let goaway = try ClientConnection.decode(Goaway.self, payload)
                        throw RPCError(status: goaway.status ?? RPCError.unauthenticated("handshake refused").status)
                    }
                    continue
                }
                try ClientConnection.readSome(fd, into: &buffer, timeoutMs: 100)
            }
            throw .unavailable("no HELLO_ACK within \(options.connectTimeoutMs) ms")
        } catch {
            close(fd)
            throw error
        }
    }

    func appendCall(payload: [UInt8], now: UInt64) {
        let streamID = nextStreamID
        nextStreamID &+= 1
        FrameHeader(length: UInt32(payload.count), type: .call, streamID: streamID).write(to: &output)
        output.append(contentsOf: payload)
        sendTimes[streamID] = now
        inFlight += 1
    }

    /// True while output is waiting for the socket to accept it.
    var writeBlocked: Bool { written < output.count }

    func flush() {
        while written < output.count {
            let n = output.withUnsafeBytes {
                send(fd, $0.baseAddress! + written, output.count - written, Int32(MSG_NOSIGNAL))
            }
            if n > 0 { written += n } else { break }
        }
        if written == output.count {
            output.removeAll(keepingCapacity: true)
            written = 0
        }
    }

    /// Free bytes at the end of the input buffer.
    var inputRoom: Int { input.count - inputCount }

    /// Reads into the input buffer: bytes read, 0 at EOF, -1 when nothing is available.
    func readAvailable() -> Int {
        if inputCount == input.count { return -1 }
        let n = Glibc.read(fd, input.baseAddress! + inputCount, input.count - inputCount)
        if n > 0 {
            inputCount += n
            return n
        }
        if n == 0 { return 0 }
        return -1
    }

    /// Calls `body` for each complete frame in the input buffer, then keeps the incomplete rest.
    func parseFrames(_ body: (UInt8, UInt32, UnsafeRawBufferPointer) -> Void) {
        var offset = 0
        let bytes = UnsafeRawBufferPointer(input)
        while inputCount - offset >= FrameHeader.size {
            let (header, _) = FrameHeader.read(
                from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + FrameHeader.size]))
            let total = FrameHeader.size + Int(header.length)
            guard inputCount - offset >= total else { break }
            body(
                header.type.rawValue, header.streamID,
                UnsafeRawBufferPointer(rebasing: bytes[offset + FrameHeader.size..<offset + total]))
            offset += total
        }
        if offset > 0 {
            let rest = inputCount - offset
            if rest > 0 { input.baseAddress!.copyMemory(from: input.baseAddress! + offset, byteCount: rest) }
            inputCount = rest
        }
    }
}
