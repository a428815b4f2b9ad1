import RPCCore
import Synchronization

/// The server's metrics and access log: a `CallObserver` that counts calls by method and
/// status, times them in histograms, counts connections and bytes, and renders everything in
/// Prometheus' text format (names and units follow its conventions: `_total` counters,
/// `_seconds` and `_bytes` units, base units only).
///
/// Values the process does not observe call by call (open subscriptions, the action log's head,
/// the store's commits) come from `gauges`, sampled at each scrape.
final class ServerMetrics: CallObserver {
    /// Upper bounds of the call-duration histogram buckets, in seconds.
    static let durationBuckets: [Double] = [
        0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ]
    static let codes = 18 // 0–16, and one slot for any other

    /// Method paths in `MethodTable` order, and "unknown" last (paths the server does not serve).
    let methods: [String]
    /// Whether each of `methods` is server-streaming (false for "unknown").
    let serverStreaming: [Bool]
    /// Whether each of `methods` is a runtime reflection or health method.
    let isInternal: [Bool]
    let calls: Counters // [wire][method][code]
    let histogram: Counters // [wire][method][bucket]: counts per bucket (not cumulative), every method
    let durationSum: Counters // [wire][method]: nanoseconds
    let started: Counters // [wire][method]
    let requestsReceived: Counters // [wire][method]
    let messagesSent: Counters // [wire][method]: unary replies and stream messages
    /// Failed calls by method index and `ERR_…` code: the codes are a fixed set, so the keys are
    /// bounded; a lock only on failures.
    let errors = Mutex<[ErrorKey: UInt64]>([:])
    private let connection: Counters // opened, closed
    private let traffic: Counters // received, sent (by the loops)
    /// Server-stream messages (by whoever sends: the fan-out): messages; bytes of those sent
    /// uncompressed; encoded and wire bytes of those compressed. Kept apart so that a message
    /// sent as it is — every fan-out message but deflated streams' — costs two atomic adds, not
    /// three; the totals are sums of counters that only grow, so they only grow too.
    private let streamTraffic: Counters
    private let transport: Counters // see `slot(of:)`
    let internalCalls: Counters // [wire][method][code], for calls of `RuntimeServices.isInternal` methods
    private let accessLog: AccessLog?
    private let gauges: @Sendable () -> [Sample]
    /// Calls refused by the rate limit, by app: apps are those with keys (a refused call has
    /// authenticated), so the label's values are bounded by the keys configured.
    private let rateLimited = Mutex<[String: UInt64]>([:])
    private let apps: @Sendable () -> [String]

    /// A value sampled at scrape time.
    struct Sample {
        var name: String
        var help: String
        var type: String
        var labels: [(String, String)] = []
        var value: Double
    }

    /// - Parameters:
    ///   - methods: the method paths, in `MethodTable` order.
    ///   - accessLog: where one info line per call goes; nil for no access log.
    ///   - apps: the apps with keys now: their per-app counters are shown from zero.
    ///   - serverStreaming: for each method, whether it is server-streaming (empty: none is).
    init(
        methods: [String], serverStreaming: [Bool] = [], accessLog: AccessLog?,
        apps: @escaping @Sendable () -> [String] = { [] }, gauges: @escaping @Sendable () -> [Sample]
    ) {
        self.methods = methods + ["unknown"]
        self.serverStreaming = methods.indices.map { $0 < serverStreaming.count && serverStreaming[$0] } + [false]
        isInternal = self.methods.map { RuntimeServices.isInternal(path: $0) }
        let slots = self.methods.count
        let perWire = Self.listeners.count * slots
        calls = Counters(count: perWire * Self.codes)
        internalCalls = Counters(count: perWire * Self.codes)
        histogram = Counters(count: perWire * (Self.durationBuckets.count + 1))
        durationSum = Counters(count: perWire)
        started = Counters(count: perWire)
        requestsReceived = Counters(count: perWire)
        messagesSent = Counters(count: perWire)
        connection = Counters(count: 2)
        traffic = Counters(count: 2)
        streamTraffic = Counters(count: 4)
        transport = Counters(count: Self.transportSlots)
        self.accessLog = accessLog
        self.apps = apps
        self.gauges = gauges
    }

    // MARK: CallObserver

    func connectionOpened() { connection.add(0) }

    func connectionClosed() { connection.add(1) }

    func transferred(received: Int, sent: Int) {
        if received > 0 { traffic.add(0, UInt64(received)) }
        if sent > 0 { traffic.add(1, UInt64(sent)) }
    }

    func callStarted(methodIndex: Int?, wire: WireKind) {
        started.add(slot(wire, methodIndex))
    }

    func requestReceived(methodIndex: Int, wire: WireKind) {
        requestsReceived.add(slot(wire, methodIndex))
    }

    func streamMessage(encodedBytes: Int, wireBytes: Int, methodIndex: Int?, wire: WireKind) {
        messagesSent.add(slot(wire, methodIndex))
        streamTraffic.add(0)
        if encodedBytes == wireBytes {
            streamTraffic.add(1, UInt64(encodedBytes))
        } else {
            streamTraffic.add(2, UInt64(encodedBytes))
            streamTraffic.add(3, UInt64(wireBytes))
        }
    }

    func callEnded(_ call: CallRecord) {
        accessLog?.record(call)
        let method = slot(call.wire, call.methodIndex)
        let code = min(Int(call.code.rawValue), Self.codes - 1)
        let seconds = Double(call.durationNanoseconds) / 1e9
        let bucket = Self.durationBuckets.firstIndex(where: { seconds <= $0 }) ?? Self.durationBuckets.count
        histogram.add(method * (Self.durationBuckets.count + 1) + bucket)
        durationSum.add(method, call.durationNanoseconds)
        // A unary call's reply is its one message; a stream's are counted as they go.
        if call.code == .ok && !serverStreaming[method % methods.count] { messagesSent.add(method) }
        if !call.errorCode.isEmpty && call.code != .ok {
            let key = ErrorKey(method: method % methods.count, code: call.errorCode)
            errors.withLock { $0[key, default: 0] += 1 }
        }
        // Tools' reflection and health calls are counted apart, so they never show in the
        // service's rates and latencies.
        if call.isInternal {
            internalCalls.add(method * Self.codes + code)
        } else {
            calls.add(method * Self.codes + code)
        }
    }

    /// A failed call's method and `ERR_…` code.
    struct ErrorKey: Hashable {
        var method: Int
        var code: String
    }

    /// The counters' index of a method on a wire: [wire][method], "unknown" for a path the
    /// server does not serve.
    private func slot(_ wire: WireKind, _ methodIndex: Int?) -> Int {
        let method = methodIndex.map { min($0, methods.count - 1) } ?? methods.count - 1
        return (wire == .grpc ? methods.count : 0) + method
    }

    func transportEvent(_ event: TransportEvent) { transport.add(Self.slot(of: event)) }

    func callRateLimited(app: String) {
        rateLimited.withLock { $0[app, default: 0] += 1 }
    }

    private static let acceptFailures = TransportEvent.AcceptFailure.allCases
    private static let refusals = TransportEvent.Refusal.allCases
    private static let cuts = TransportEvent.Cut.allCases
    private static let listeners = WireKind.allCases
    private static let handshakeRefusals = TransportEvent.HandshakeRefusal.allCases
    private static let authSlots = listeners.count * 2
    private static let transportSlots =
        acceptFailures.count + refusals.count + authSlots + cuts.count + 2 + listeners.count * handshakeRefusals.count

    /// Where each transport event is counted: accept failures, refusals, failed authentications
    /// (per listener: logged, throttled), cuts, failed TLS handshakes (logged, throttled), other
    /// refused handshakes (per listener, by reason) — in that order.
    private static func slot(of event: TransportEvent) -> Int {
        let auth = acceptFailures.count + refusals.count
        let cut = auth + authSlots
        let tls = cut + cuts.count
        let handshake = tls + 2
        switch event {
        case .acceptFailed(let failure):
            return acceptFailures.firstIndex(of: failure)!
        case .connectionRefused(let refusal):
            return acceptFailures.count + refusals.firstIndex(of: refusal)!
        case .authenticationFailed(let listener, let logged):
            return auth + listeners.firstIndex(of: listener)! * 2 + (logged ? 0 : 1)
        case .connectionCut(let reason):
            return cut + cuts.firstIndex(of: reason)!
        case .transportHandshakeFailed(let logged):
            return tls + (logged ? 0 : 1)
        case .handshakeRefused(let refusal, let listener):
            return handshake + listeners.firstIndex(of: listener)! * handshakeRefusals.count
                + handshakeRefusals.firstIndex(of: refusal)!
        }
    }

    static func label(_ failure: TransportEvent.AcceptFailure) -> String {
        switch failure {
        case .processDescriptors: "emfile"
        case .systemDescriptors: "enfile"
        case .kernelMemory: "kernel_memory"
        }
    }

    static func label(_ refusal: TransportEvent.Refusal) -> String {
        switch refusal {
        case .serverFull: "max_connections"
        case .appFull: "max_connections_per_app"
        case .outOfDescriptors: "out_of_descriptors"
        case .protocolMismatch: "protocol_mismatch"
        case .memoryBudget: "memory_budget"
        }
    }

    static func label(_ listener: WireKind) -> String {
        switch listener {
        case .mrpc: "mrpc"
        case .grpc: "grpc"
        }
    }

    static func label(_ refusal: TransportEvent.HandshakeRefusal) -> String {
        switch refusal {
        case .badPreface: "bad_preface"
        case .badHello: "bad_hello"
        case .timeout: "timeout"
        }
    }

    static func label(_ cut: TransportEvent.Cut) -> String {
        switch cut {
        case .memoryBudget: "memory_budget"
        case .frameTimeout: "frame_timeout"
        }
    }

    /// Bytes received and sent on every connection so far.
    var bytesTransferred: UInt64 { traffic[0] &+ traffic[1] }

    /// A count that moves while the server works or lets go of what it held: bytes in and out,
    /// connections opened and closed. Closing counts: connections that held much and sent
    /// nothing (an attack's, idle ones cut by a timeout) free it with no traffic at all.
    var activity: UInt64 { bytesTransferred &+ connection[0] &+ connection[1] }

    // MARK: Rendering

    /// The metrics in Prometheus' text exposition format (version 0.0.4).
    func render() -> String {
        var out = ""
        func header(_ name: String, _ type: String, _ help: String) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }
        header(
            "mrpc_calls_total", "counter",
            "Calls ended, by method, gRPC status code and wire (reflection and health apart).")
        renderCalls(calls, name: "mrpc_calls_total", into: &out)
        header(
            "mrpc_internal_calls_total", "counter",
            "Calls of the runtime's reflection and health services (tools finding their way), by method, code and wire."
        )
        renderCalls(internalCalls, name: "mrpc_internal_calls_total", into: &out)
        header("mrpc_call_duration_seconds", "histogram", "Time from a call's CALL frame to its last frame, by method.")
        for (m, method) in methods.enumerated() where !isInternal[m] {
            let buckets = Self.durationBuckets.count + 1
            var cumulative: UInt64 = 0
            var counts: [UInt64] = []
            for b in 0..<buckets {
                cumulative += histogram[m * buckets + b] + histogram[(methods.count + m) * buckets + b]
                counts.append(cumulative)
            }
            guard cumulative > 0 else { continue }
            for (b, bound) in Self.durationBuckets.enumerated() {
                out += "mrpc_call_duration_seconds_bucket{method=\"\(method)\",le=\"\(bound)\"} \(counts[b])\n"
            }
            out += "mrpc_call_duration_seconds_bucket{method=\"\(method)\",le=\"+Inf\"} \(cumulative)\n"
            let nanoseconds = durationSum[m] + durationSum[methods.count + m]
            out += "mrpc_call_duration_seconds_sum{method=\"\(method)\"} \(Double(nanoseconds) / 1e9)\n"
            out += "mrpc_call_duration_seconds_count{method=\"\(method)\"} \(cumulative)\n"
        }
        header("mrpc_connections_open", "gauge", "Open client connections.")
        out += "mrpc_connections_open \(connection[0] &- connection[1])\n"
        header("mrpc_connections_total", "counter", "Client connections accepted.")
        out += "mrpc_connections_total \(connection[0])\n"
        header("mrpc_received_bytes_total", "counter", "Bytes read from client connections.")
        out += "mrpc_received_bytes_total \(traffic[0])\n"
        header("mrpc_sent_bytes_total", "counter", "Bytes written to client connections.")
        out += "mrpc_sent_bytes_total \(traffic[1])\n"
        header("mrpc_stream_messages_total", "counter", "Server-stream messages sent.")
        out += "mrpc_stream_messages_total \(streamTraffic[0])\n"
        header("mrpc_stream_encoded_bytes_total", "counter", "Server-stream message bytes before compression.")
        out += "mrpc_stream_encoded_bytes_total \(streamTraffic[1] + streamTraffic[2])\n"
        header(
            "mrpc_stream_wire_bytes_total", "counter",
            "Server-stream message bytes on the wire (after compression, where used).")
        out += "mrpc_stream_wire_bytes_total \(streamTraffic[1] + streamTraffic[3])\n"
        header("mrpc_accept_errors_total", "counter", "Failed accept calls on the RPC listener, by reason.")
        for failure in Self.acceptFailures {
            out +=
                "mrpc_accept_errors_total{reason=\"\(Self.label(failure))\"} \(transport[Self.slot(of: .acceptFailed(failure))])\n"
        }
        header(
            "mrpc_connections_refused_total", "counter",
            "Connections refused with GOAWAY ERR_TOO_MANY_CONNECTIONS, by reason.")
        for refusal in Self.refusals {
            out +=
                "mrpc_connections_refused_total{reason=\"\(Self.label(refusal))\"} \(transport[Self.slot(of: .connectionRefused(refusal))])\n"
        }
        header("mrpc_connections_cut_total", "counter", "Connections the server closed while serving them, by reason.")
        for cut in Self.cuts {
            out +=
                "mrpc_connections_cut_total{reason=\"\(Self.label(cut))\"} \(transport[Self.slot(of: .connectionCut(cut))])\n"
        }
        var keyRefusals: [UInt64] = []
        var throttled: UInt64 = 0
        for listener in Self.listeners {
            let throttledHere = transport[Self.slot(of: .authenticationFailed(listener, logged: false))]
            keyRefusals.append(transport[Self.slot(of: .authenticationFailed(listener, logged: true))] &+ throttledHere)
            throttled &+= throttledHere
        }
        header(
            "mrpc_handshakes_refused_total", "counter",
            "Handshakes refused before a call, by listener and reason (bad_key: a wrong or missing API key).")
        for (index, listener) in Self.listeners.enumerated() {
            let name = Self.label(listener)
            out += "mrpc_handshakes_refused_total{listener=\"\(name)\",reason=\"bad_key\"} \(keyRefusals[index])\n"
            // gRPC has no HELLO: its requests carry their keys.
            for refusal in Self.handshakeRefusals where listener == .mrpc || refusal != .badHello {
                let value = transport[Self.slot(of: .handshakeRefused(refusal, listener))]
                out +=
                    "mrpc_handshakes_refused_total{listener=\"\(name)\",reason=\"\(Self.label(refusal))\"} \(value)\n"
            }
        }
        header(
            "mrpc_auth_failures_total", "counter",
            "HELLOs (gRPC requests) refused for a wrong or missing API key: mrpc_handshakes_refused_total{reason=\"bad_key\"} summed over listeners."
        )
        out += "mrpc_auth_failures_total \(keyRefusals.reduce(0, &+))\n"
        header(
            "mrpc_auth_failures_throttled_total", "counter",
            "Of those, the ones not logged one by one (over their address's share; summarised instead).")
        out += "mrpc_auth_failures_throttled_total \(throttled)\n"
        let tlsFailures =
            transport[Self.slot(of: .transportHandshakeFailed(logged: true))]
            &+ transport[Self.slot(of: .transportHandshakeFailed(logged: false))]
        header(
            "mrpc_tls_handshake_failures_total", "counter",
            "Connections to the TLS listener closed before TLS was established (a failed handshake, a plaintext client)."
        )
        out += "mrpc_tls_handshake_failures_total \(tlsFailures)\n"
        var limited = rateLimited.withLock { $0 }
        for app in apps() where limited[app] == nil { limited[app] = 0 }
        header(
            "moderation_rate_limited_calls_total", "counter",
            "Calls refused with ERR_RATE_LIMITED because their app was over its request rate (--rate-limit), by app.")
        for (app, count) in limited.sorted(by: { $0.key < $1.key }) {
            out += "moderation_rate_limited_calls_total{app=\"\(Self.escape(app))\"} \(count)\n"
        }
        renderStandardNames(into: &out)
        var described: Set<String> = []
        for sample in gauges() {
            // A histogram's samples share one family: `name` for buckets (written `name_bucket`),
            // `name_sum` and `name_count`.
            let isHistogram = sample.type == "histogram"
            let family = isHistogram ? sample.name.removingSuffix("_sum").removingSuffix("_count") : sample.name
            if described.insert(family).inserted { header(family, sample.type, sample.help) }
            let name = isHistogram && family == sample.name ? sample.name + "_bucket" : sample.name
            let labels =
                sample.labels.isEmpty
                ? "" : "{" + sample.labels.map { "\($0.0)=\"\(Self.escape($0.1))\"" }.joined(separator: ",") + "}"
            out += "\(name)\(labels) \(Self.number(sample.value))\n"
        }
        return out
    }

    private func renderCalls(_ counters: Counters, name: String, into out: inout String) {
        for (w, wire) in Self.listeners.enumerated() {
            for (m, method) in methods.enumerated() {
                for code in 0..<Self.codes {
                    let value = counters[(w * methods.count + m) * Self.codes + code]
                    guard value > 0 else { continue }
                    let codeName = code < 17 ? StatusCode(rawValue: UInt32(code)).name : "OTHER"
                    out += "\(name){method=\"\(method)\",code=\"\(codeName)\",wire=\"\(Self.label(wire))\"} \(value)\n"
                }
            }
        }
    }

    static func escape(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

extension String {
    func removingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
