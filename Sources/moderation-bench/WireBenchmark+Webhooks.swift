import CSystemShims
internal import Glibc
import ModerationMessages
import ProtoBridge
import RPCCore
import RPCPosix
import Synchronization

extension WireBenchmark {
    /// Webhook delivery against a local receiver that answers 200 at once
    /// (`bench/webhook_receiver.py`, on the load's core when pinned):
    ///
    /// - Cost: the durable-mutation load (`mutations`' Join/Kick/Join/Ban/Unban) with a webhook
    ///   delivering every action against the same load with none, alternated for `rounds` rounds
    ///   (the webhook is created before each "with" phase, so it starts caught up, and deleted
    ///   after it); the ratio is taken within each round.
    /// - Throughput: a new webhook replayed from the start of the log (every action of the cost
    ///   phases): actions delivered per second until its cursor reaches the head, with the
    ///   server's CPU per action and the receiver's CPU (to show it is not the bottleneck).
    /// - Latency: mutations at 1 000 a second for `seconds` × 2, from commit (the action's
    ///   timestamp) to receipt (the receiver's clock, the same machine's), p50 and p99.
    static func webhooks(
        server: ServerProcess, connections: Int, depth: Int, seconds: Double, rounds: Int, snapshot: Snapshot
    ) throws(BenchError) {
        let setup = try connect(server.port, name: "bench-webhooks")
        defer { setup.close() }
        let receiver = try Receiver(latency: false)
        defer { receiver.stop() }
        let url = "http://127.0.0.1:\(receiver.port)/hook"
        print(
            "webhooks (a local receiver answering 200 at once; the durable-mutation load, \(connections) connections × \(depth) in flight):"
        )

        var ratios: [Double] = []
        var rates: [String: [Double]] = [:]
        snapshot.take("before", "webhooks")
        for round in 1...rounds {
            var line: [String] = []
            for active in round % 2 == 1 ? [false, true] : [true, false] {
                var webhookID: String?
                if active {
                    webhookID = try call(setup, ModerationMethods.createWebhook, CreateWebhookRequest(url: url))
                        .webhook?.id
                }
                let (rate, cpuPerCall) = try mutationRate(
                    server, connections: connections, depth: depth, seconds: seconds)
                let name = active ? "with a webhook" : "without"
                rates[name, default: []].append(rate)
                var text =
                    "\(name) \(Int(rate)) mutations/s (\(fixed(cpuPerCall * 1e6)) µs server CPU each, the server at \(Int(rate * cpuPerCall * 100))% of its core)"
                if let webhookID {
                    let head = server.metric("moderation_action_log_head_seq") ?? 0
                    let caughtUp = waitFor(seconds: 30) {
                        (try? cursor(setup, webhookID)).map { Double($0) >= head } ?? false
                    }
                    // This webhook's own counter (the total moves as webhooks come and go).
                    let delivered =
                        server.metric(
                            "moderation_webhook_actions_delivered_total{app=\"\(ServerProcess.app(0))\",webhook=\"\(webhookID)\"}"
                        )
                        ?? 0
                    text += ", \(Int(delivered)) actions delivered\(caughtUp ? "" : " (not caught up in 30 s)")"
                    _ = try call(setup, ModerationMethods.deleteWebhook, DeleteWebhookRequest(id: webhookID))
                }
                line.append(text)
            }
            ratios.append(rates["with a webhook"]!.last! / max(rates["without"]!.last!, 1))
            print("  round \(round): " + line.joined(separator: "; ") + "; ratio \(hundredths(ratios.last!))×")
        }
        snapshot.take("after", "webhooks")
        print(
            "  median: without \(Int(middle(rates["without"]!))) mutations/s, with a webhook \(Int(middle(rates["with a webhook"]!))) mutations/s: ratio \(hundredths(middle(ratios)))× (target ≥ 0.9×)"
        )

        // Throughput: the whole log again, to a webhook of its own.
        let head = UInt64(server.metric("moderation_action_log_head_seq") ?? 0)
        let replayed =
            try call(setup, ModerationMethods.createWebhook, CreateWebhookRequest(url: url)).webhook?.id ?? ""
        let cpuBefore = server.cpuSeconds
        let receiverBefore = receiver.cpuSeconds
        let start = monotonicNanoseconds()
        _ = try call(setup, ModerationMethods.replayWebhook, ReplayWebhookRequest(id: replayed, afterSeq: 0))
        let done = waitFor(seconds: 120, pollMs: 5) { (try? cursor(setup, replayed)).map { $0 >= head } ?? false }
        let elapsed = Double(monotonicNanoseconds() - start) / 1e9
        let cpu = server.cpuSeconds - cpuBefore
        let receiverCPU = receiver.cpuSeconds - receiverBefore
        _ = try call(setup, ModerationMethods.deleteWebhook, DeleteWebhookRequest(id: replayed))
        print(
            "  throughput: \(head) actions replayed in \(fixed(elapsed)) s\(done ? "" : " (not finished in 120 s)"): \(Int(Double(head) / elapsed)) actions/s (target ≥ 20 000); server CPU \(fixed(cpu / elapsed * 100))% of one core, \(fixed(cpu / Double(max(head, 1)) * 1e6)) µs per action; the receiver \(fixed(receiverCPU / elapsed * 100))% of one core"
        )

        // Latency at 1 000 mutations a second.
        let timed = try Receiver(latency: true)
        defer { timed.stop() }
        let latencyHook =
            try call(
                setup, ModerationMethods.createWebhook,
                CreateWebhookRequest(url: "http://127.0.0.1:\(timed.port)/hook")
            ).webhook?.id ?? ""
        let paced = try pacedMutations(server, perSecond: 1_000, seconds: seconds * 2)
        let pacedHead = UInt64(server.metric("moderation_action_log_head_seq") ?? 0)
        _ = waitFor(seconds: 30) { (try? cursor(setup, latencyHook)).map { $0 >= pacedHead } ?? false }
        _ = try call(setup, ModerationMethods.deleteWebhook, DeleteWebhookRequest(id: latencyHook))
        var latencies = timed.latenciesMs()
        latencies.sort()
        guard !latencies.isEmpty else { throw BenchError("the latency receiver got no actions") }
        func percentile(_ p: Double) -> Int64 { latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] }
        print(
            "  latency at \(Int(paced)) mutations/s for \(fixed(seconds * 2)) s: commit → receipt p50 \(percentile(0.5)) ms, p99 \(percentile(0.99)) ms, max \(latencies.last!) ms over \(latencies.count) actions (target p99 ≤ 100 ms)"
        )
    }

    /// The webhook's cursor, from ListWebhooks.
    private static func cursor(_ client: ClientConnection, _ id: String) throws(BenchError) -> UInt64 {
        let list = try call(client, ModerationMethods.listWebhooks, ListWebhooksRequest())
        guard let webhook = list.webhooks.first(where: { $0.id == id }) else { throw BenchError("no webhook \(id)") }
        return webhook.status?.lastDeliveredSeq ?? 0
    }

    /// `mutations`' load for `seconds`: mutations per second and server CPU per mutation.
    private static func mutationRate(_ server: ServerProcess, connections: Int, depth: Int, seconds: Double)
        throws(BenchError) -> (rate: Double, cpuPerCall: Double)
    {
        let counter = Atomic<Int>(0)
        let cpuBefore = server.cpuSeconds
        let elapsed = try drive(ports: [server.port], connections: connections, depth: depth, seconds: seconds) {
            slot, step, connection, done in
            issueMutation(slot: slot, step: step, connection) { _ in
                counter.add(1, ordering: .relaxed)
                done()
            }
        }
        let count = Double(counter.load(ordering: .relaxed))
        return (count / elapsed, (server.cpuSeconds - cpuBefore) / max(count, 1))
    }

    /// Mutations at a fixed rate (one every 1/`perSecond` s, whatever the previous ones do) on
    /// 64 slots of one connection; returns the rate reached.
    private static func pacedMutations(_ server: ServerProcess, perSecond: Int, seconds: Double)
        throws(BenchError) -> Double
    {
        let connection = try connect(server.port, name: "bench-paced")
        defer { connection.close() }
        let slots = 64
        let busy = Mutex<[Bool]>(Array(repeating: false, count: slots))
        let steps = Mutex<[Int]>(Array(repeating: 0, count: slots))
        let interval = UInt64(1e9 / Double(perSecond))
        let start = monotonicNanoseconds()
        let end = start + UInt64(seconds * 1e9)
        var issued = 0
        var next = start
        while next < end {
            let now = monotonicNanoseconds()
            if now < next {
                var pause = timespec(tv_sec: 0, tv_nsec: Int(next - now))
                nanosleep(&pause, nil)
            }
            next += interval
            guard
                let slot = busy.withLock({ busy -> Int? in
                    guard let free = busy.firstIndex(of: false) else { return nil }
                    busy[free] = true
                    return free
                })
            else { continue }
            let step = steps.withLock { steps -> Int in
                defer { steps[slot] += 1 }
                return steps[slot]
            }
            issued += 1
            issueMutation(slot: slot, step: step, connection) { _ in busy.withLock { $0[slot] = false } }
        }
        _ = waitFor(seconds: 10) { !busy.withLock { $0.contains(true) } }
        return Double(issued) / seconds
    }

    /// Polls `condition` every `pollMs` until it holds or `seconds` pass.
    private static func waitFor(seconds: Double, pollMs: Int = 20, _ condition: () -> Bool) -> Bool {
        let deadline = monotonicNanoseconds() + UInt64(seconds * 1e9)
        while monotonicNanoseconds() < deadline {
            if condition() { return true }
            usleep(UInt32(pollMs * 1000))
        }
        return condition()
    }

    /// `bench/webhook_receiver.py` as a child process.
    private final class Receiver {
        let port: Int
        let log: String
        private let pid: pid_t

        init(latency: Bool) throws(BenchError) {
            var template = Array("/tmp/webhook-bench-XXXXXX".utf8CString)
            let made = mkstemp(&template)
            guard made >= 0 else { throw BenchError("mkstemp failed") }
            Glibc.close(made)
            log = String(cString: template)
            let portFile = log + ".port"
            let command =
                "exec taskset -c \(cshim_usable_cpu_count() >= 2 ? 1 : 0) python3 bench/webhook_receiver.py \(log)"
                + (latency ? " --latency" : "") + " > \(portFile)"
            var pid: pid_t = 0
            let arguments = ["/bin/sh", "-c", command]
            var argv = arguments.map { strdup($0) } + [nil]
            defer { for pointer in argv { free(pointer) } }
            guard posix_spawn(&pid, "/bin/sh", nil, nil, &argv, environ) == 0 else {
                throw BenchError("cannot start bench/webhook_receiver.py")
            }
            self.pid = pid
            var port: Int?
            for _ in 0..<200 {
                if let text = Self.read(portFile), let number = Int(text.trimmingWhitespace()) {
                    port = number
                    break
                }
                usleep(25_000)
            }
            guard let port else {
                kill(pid, SIGKILL)
                throw BenchError("bench/webhook_receiver.py did not start")
            }
            self.port = port
        }

        func stop() {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            if getenv("WEBHOOK_BENCH_KEEP") == nil { unlink(log) } else { print("  (receiver log kept: \(log))") }
            unlink(log + ".port")
        }

        var cpuSeconds: Double {
            guard let stat = Self.read("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return 0 }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
            return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
        }

        /// Receipt − commit of every action received (a `--latency` receiver's log), in ms.
        func latenciesMs() -> [Int64] {
            guard let text = Self.read(log) else { return [] }
            var latencies: [Int64] = []
            for line in text.split(separator: "\n") {
                let fields = line.split(separator: " ")
                guard fields.count > 2, let received = Int64(fields[0]) else { continue }
                for committed in fields.dropFirst(2) { latencies.append(received - (Int64(committed) ?? received)) }
            }
            return latencies
        }

        static func read(_ path: String) -> String? {
            guard let file = fopen(path, "r") else { return nil }
            defer { fclose(file) }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = fread(&chunk, 1, chunk.count, file)
                if count == 0 { break }
                bytes += chunk[0..<count]
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        String(unicodeScalars.filter { !$0.properties.isWhitespace })
    }
}
