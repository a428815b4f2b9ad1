internal import Glibc
import ProtoBridge
public import RPCCore
import RPCGRPC
import RPCMessages
import RPCPosix
import Synchronization
import TLSSupport
import ThreadSupport

/// A ghz-class load generator over the MRPC protocol, or gRPC over HTTP/2.
///
/// Built to cost the client less CPU per call than the server spends: each request's CALL
/// payload (CallHeader and body) is encoded once up front, so a call is a 12-byte header plus a
/// copy; connections are non-blocking sockets on one epoll per client thread; every reply read in
/// a turn is answered with its next call and all of them go out in one write.
public enum LoadGenerator {
    public static func run(_ configuration: LoadConfiguration) throws(RPCError) -> LoadReport {
        precondition(!configuration.bodies.isEmpty && configuration.connections > 0 && configuration.depth > 0)
        switch configuration.transport {
        case .framed: return try runFramed(configuration)
        case .grpc: return try runGRPC(configuration)
        }
    }

    private static func runFramed(_ configuration: LoadConfiguration) throws(RPCError) -> LoadReport {
        let header = CallHeader(
            method: configuration.path, timeoutMs: configuration.callOptions.timeoutMs,
            onBehalfOf: configuration.callOptions.onBehalfOf, idempotencyKey: configuration.callOptions.idempotencyKey,
            requestID: configuration.callOptions.requestID, metadata: configuration.callOptions.metadata,
            acceptEncodings: configuration.callOptions.acceptDeflate ? ["deflate"] : [])
        var largest = CallSizes(headerBytes: 0, bodyBytes: 0)
        let payloads: [[UInt8]] = configuration.bodies.map { body in
            var payload: [UInt8] = []
            BigEndian.append(0, to: &payload)
            let length = header.encode(appendingTo: &payload)
            BigEndian.store(UInt32(length), in: &payload, at: 0)
            payload += body
            largest = CallSizes(headerBytes: length, bodyBytes: max(largest.bodyBytes, body.count))
            return payload
        }
        // One TLS context for every connection (its CA file read once).
        var tlsContext: TLSContext?
        if let tls = configuration.client.tls {
            do throws(TLSError) {
                tlsContext = try TLSContext.client(tls)
            } catch {
                throw .invalidArgument(error.message)
            }
        }
        var connections: [LoadConnection] = []
        for _ in 0..<configuration.connections {
            connections.append(try LoadConnection.open(configuration.client, tlsContext: tlsContext))
            // A call over the server's limits would fail every time, or end the connection.
            if let refusal = connections[0].helloAck.refusal(for: largest) {
                for connection in connections { close(connection.fd) }
                throw refusal
            }
        }
        return drive(connections, payloads: payloads, configuration: configuration)
    }

    /// gRPC: every request is one length-prefixed message (uncompressed) in one DATA frame.
    private static func runGRPC(_ configuration: LoadConfiguration) throws(RPCError) -> LoadReport {
        guard configuration.client.tls == nil else {
            throw .invalidArgument(
                "gRPC load speaks plaintext HTTP/2 (h2c) only; over TLS, load the same port with our protocol")
        }
        let payloads = configuration.bodies.map { GRPCMessageReader.frame($0, compressed: false) }
        let headers = GRPCLoadConnection.requestHeaders(configuration)
        var connections: [GRPCLoadConnection] = []
        for _ in 0..<configuration.connections {
            let connection: GRPCLoadConnection
            do throws(RPCError) {
                connection = try GRPCLoadConnection.open(configuration.client, headers: headers)
            } catch {
                for connection in connections { close(connection.fd) }
                throw error
            }
            connections.append(connection)
            // More streams than the server allows would wait in nghttp2's queue, and their wait
            // would pass for the server's latency.
            let allowed = connection.maxConcurrentStreams
            if configuration.depth > allowed {
                for connection in connections { close(connection.fd) }
                throw .invalidArgument(
                    "--depth \(configuration.depth) is more than the \(allowed) concurrent streams the "
                        + "server allows per connection (its SETTINGS_MAX_CONCURRENT_STREAMS): give --depth "
                        + "\(allowed) or less, and more --conns for more calls in flight"
                )
            }
        }
        return drive(connections, payloads: payloads, configuration: configuration)
    }

    /// The run itself, the same for every protocol: the connections spread over the threads,
    /// warm-up, pacing, measuring, and the threads' results merged into the report.
    private static func drive<Connection: LoadTransport>(
        _ connections: [Connection], payloads: [[UInt8]], configuration: LoadConfiguration
    ) -> LoadReport {
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
        var groups = [[Connection]](repeating: [], count: threadCount)
        for (i, connection) in connections.enumerated() { groups[i % threadCount].append(connection) }
        let cpuBefore = processCPUNanoseconds()
        let results = Mutex<[LoadThreadResult]>([])
        var threads: [WorkerThread] = []
        for (index, group) in groups.enumerated() {
            let worker = LoadThread(
                connections: group, payloads: payloads, depth: configuration.depth,
                interval: perConnectionInterval, shared: shared)
            threads.append(
                WorkerThread(name: "load-\(index)") {
                    let result = worker.run()
                    results.withLock { $0.append(result) }
                })
        }
        for thread in threads { thread.join() }
        let cpu = processCPUNanoseconds() - cpuBefore
        shared.finish(at: monotonicNow())
        var report = LoadReport()
        report.sentCalls = shared.sentCalls
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
