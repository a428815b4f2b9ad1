import LoadGeneration
import RPCCore

/// The renderings of a load report: text for people (ghz's layout), JSON and CSV for machines,
/// HTML for a browser (`BenchReport+HTML.swift`). All carry the same figures.
enum BenchReport {
    static func text(_ run: BenchRun) -> String {
        let (report, configuration) = (run.report, run.configuration)
        let latency = report.latency
        var lines = [
            "Summary:",
            "  Method:       \(configuration.path)",
            "  Count:        \(report.calls)",
            "  Total:        \(fixed(report.durationSeconds, 2)) s",
            "  Slowest:      \(ms(latency.maxNanoseconds)) ms",
            "  Fastest:      \(ms(fastest(latency))) ms",
            "  Average:      \(ms(latency.meanNanoseconds)) ms",
            "  Requests/sec: \(fixed(report.callsPerSecond, 1))",
            "  Load:         \(configuration.connections) connection(s) × \(configuration.depth) in flight"
                + (configuration.rate.map { ", limited to \(fixed($0, 1)) calls/s" } ?? "")
                + (configuration.warmupSeconds > 0
                    ? ", after \(fixed(configuration.warmupSeconds, 2)) s of warm-up" : ""),
            "  Client CPU:   \(fixed(report.clientCPUNanosecondsPerCall / 1000, 2)) µs per call",
        ]
        if run.showsRequests { lines.append("  Requests:     \(run.requestsSummary)") }
        lines += [
            "",
            "Latency distribution:",
        ]
        for (label, fraction) in percentiles {
            lines.append("  \(label.padded(6)) in \(ms(latency.percentile(fraction))) ms")
        }
        lines += ["", "Response time histogram (ms, calls up to that latency):"]
        let buckets = histogram(latency)
        let widest = buckets.map(\.count).max() ?? 1
        for bucket in buckets {
            let bar = String(
                repeating: "∎", count: widest == 0 ? 0 : Int((Double(bucket.count) / Double(widest) * 40).rounded(.up)))
            lines.append("  \(ms(bucket.upperMicros * 1000).padded(10)) [\(String(bucket.count).padded(9))] |\(bar)")
        }
        lines += ["", "Status code distribution:"]
        for outcome in outcomes(report) {
            lines.append("  [\(outcome.label)]   \(outcome.count) responses")
        }
        if !report.connectionErrors.isEmpty {
            lines += ["", "Connection errors:"]
            for (error, count) in connectionErrors(report) { lines.append("  [\(count)] \(error)") }
        }
        return lines.joined(separator: "\n")
    }

    static func json(_ run: BenchRun) -> String {
        let (report, configuration) = (run.report, run.configuration)
        let latency = report.latency
        var fields: [String] = [
            "\"method\":\(Logger.jsonString(configuration.path))",
            "\"count\":\(report.calls)",
            "\"errors\":\(failedCalls(report))",
            "\"durationSeconds\":\(fixed(report.durationSeconds, 3))",
            "\"callsPerSecond\":\(fixed(report.callsPerSecond, 1))",
            "\"connections\":\(configuration.connections)",
            "\"depth\":\(configuration.depth)",
            "\"rps\":\(configuration.rate.map { fixed($0, 1) } ?? "null")",
            "\"warmupSeconds\":\(fixed(configuration.warmupSeconds, 3))",
            "\"clientCpuMicrosPerCall\":\(fixed(report.clientCPUNanosecondsPerCall / 1000, 3))",
            "\"requests\":{\"distinct\":\(run.distinctRequests),\"sent\":\(report.sentCalls),"
                + "\"repeated\":\(run.requestsRepeated)}",
        ]
        var latencyFields = [
            "\"fastest\":\(ms(fastest(latency)))",
            "\"slowest\":\(ms(latency.maxNanoseconds))",
            "\"mean\":\(ms(latency.meanNanoseconds))",
        ]
        for (label, fraction) in percentiles {
            latencyFields.append("\"\(label)\":\(ms(latency.percentile(fraction)))")
        }
        fields.append("\"latencyMs\":{\(latencyFields.joined(separator: ","))}")
        let buckets = histogram(latency).map { "{\"upToMs\":\(ms($0.upperMicros * 1000)),\"count\":\($0.count)}" }
        fields.append("\"histogram\":[\(buckets.joined(separator: ","))]")
        let statuses = outcomes(report).map { outcome in
            "{\"code\":\(outcome.code.map { String($0.rawValue) } ?? "null"),\"codeName\":\(Logger.jsonString(outcome.codeName)),"
                + "\"errorCode\":\(Logger.jsonString(outcome.errorCode)),\"count\":\(outcome.count)}"
        }
        fields.append("\"statuses\":[\(statuses.joined(separator: ","))]")
        let errors = connectionErrors(report).map { "{\"error\":\(Logger.jsonString($0.error)),\"count\":\($0.count)}" }
        fields.append("\"connectionErrors\":[\(errors.joined(separator: ","))]")
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// One `section,name,value` row per figure: summary, requests, latency_ms, histogram_ms (name =
    /// the bucket's upper bound), status (name = code name and ERR_ code), connection_error.
    static func csv(_ run: BenchRun) -> String {
        let (report, configuration) = (run.report, run.configuration)
        let latency = report.latency
        var rows: [(String, String, String)] = [
            ("summary", "method", configuration.path),
            ("summary", "count", "\(report.calls)"),
            ("summary", "errors", "\(failedCalls(report))"),
            ("summary", "duration_s", fixed(report.durationSeconds, 3)),
            ("summary", "calls_per_s", fixed(report.callsPerSecond, 1)),
            ("summary", "connections", "\(configuration.connections)"),
            ("summary", "depth", "\(configuration.depth)"),
            ("summary", "rps", configuration.rate.map { fixed($0, 1) } ?? ""),
            ("summary", "warmup_s", fixed(configuration.warmupSeconds, 3)),
            ("requests", "distinct", "\(run.distinctRequests)"),
            ("requests", "sent", "\(report.sentCalls)"),
            ("requests", "repeated", "\(run.requestsRepeated)"),
            ("latency_ms", "fastest", ms(fastest(latency))),
            ("latency_ms", "slowest", ms(latency.maxNanoseconds)),
            ("latency_ms", "mean", ms(latency.meanNanoseconds)),
        ]
        for (label, fraction) in percentiles { rows.append(("latency_ms", label, ms(latency.percentile(fraction)))) }
        for bucket in histogram(latency) {
            rows.append(("histogram_ms", ms(bucket.upperMicros * 1000), "\(bucket.count)"))
        }
        for outcome in outcomes(report) { rows.append(("status", outcome.label, "\(outcome.count)")) }
        for (error, count) in connectionErrors(report) { rows.append(("connection_error", error, "\(count)")) }
        return (["section,name,value"] + rows.map { [$0.0, $0.1, $0.2].map(csvField).joined(separator: ",") }).joined(
            separator: "\n")
    }

    /// Measured calls that did not end OK.
    static func failedCalls(_ report: LoadReport) -> UInt64 {
        report.outcomes.filter { $0.key != "OK" }.values.reduce(0, +)
    }

    // MARK: Figures

    static let percentiles: [(String, Double)] = [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999)]

    static func fastest(_ latency: LatencyHistogram) -> UInt64 {
        latency.count > 0 ? latency.minNanoseconds : 0
    }

    /// A status seen during the run, with its count; most frequent first.
    struct Outcome {
        /// As the load generator counts it: "OK", "NOT_FOUND ERR_GROUP_NOT_FOUND", "MALFORMED_REPLY".
        var label: String
        var count: UInt64
        var codeName: String
        var errorCode: String
        /// nil for an outcome that is not a status (a reply that did not parse).
        var code: StatusCode? { StatusCode(name: codeName) }
    }

    static func outcomes(_ report: LoadReport) -> [Outcome] {
        report.outcomes.map { label, count in
            let parts = label.split(separator: " ", maxSplits: 1).map(String.init)
            return Outcome(
                label: label, count: count, codeName: parts.first ?? label, errorCode: parts.count > 1 ? parts[1] : "")
        }.sorted { ($0.count, $1.label) > ($1.count, $0.label) }
    }

    static func connectionErrors(_ report: LoadReport) -> [(error: String, count: Int)] {
        Dictionary(grouping: report.connectionErrors, by: { $0 }).map { ($0.key, $0.value.count) }.sorted {
            $0.error < $1.error
        }
    }

    /// About ten evenly spaced buckets between the fastest and slowest call: (upper bound in µs,
    /// calls whose latency is above the previous bound and at most this one).
    static func histogram(_ latency: LatencyHistogram) -> [(upperMicros: UInt64, count: UInt64)] {
        let fine = latency.nonEmptyBuckets
        guard let first = fine.first, let last = fine.last else { return [] }
        let low = first.upperMicros
        let high = last.upperMicros
        let step = max(1, (high - low + 9) / 10)
        var coarse: [(upperMicros: UInt64, count: UInt64)] = []
        var edge = low
        var index = 0
        while index < fine.count {
            var count: UInt64 = 0
            while index < fine.count && fine[index].upperMicros <= edge {
                count += fine[index].count
                index += 1
            }
            coarse.append((edge, count))
            edge += step
        }
        return coarse
    }

    // MARK: Formatting

    static func ms(_ nanoseconds: UInt64) -> String { fixed(Double(nanoseconds) / 1e6, 3) }

    /// `value` with exactly `decimals` digits after the point (no Foundation `String(format:)`).
    static func fixed(_ value: Double, _ decimals: Int) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let whole = Int(scaled / scale)
        var fraction = String(Int(scaled - Double(whole) * scale))
        while fraction.count < decimals { fraction = "0" + fraction }
        return (value < 0 ? "-" : "") + (decimals > 0 ? "\(whole).\(fraction)" : "\(whole)")
    }

    /// A CSV field, quoted when it holds a comma, quote or line break (RFC 4180).
    private static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingAll("\"", with: "\"\"") + "\""
    }
}
