import RPCCore
import RPCPosix

/// The three renderings of a load report: text for people, JSON and CSV for machines.
enum BenchReport {
    static func text(_ report: LoadReport, configuration: LoadConfiguration) -> String {
        let latency = report.latency
        var lines = [
            "Summary:",
            "  Count:        \(report.calls)",
            "  Total:        \(fixed(report.durationSeconds, 2)) s",
            "  Slowest:      \(ms(latency.maxNanoseconds)) ms",
            "  Fastest:      \(ms(latency.count > 0 ? latency.minNanoseconds : 0)) ms",
            "  Average:      \(ms(latency.meanNanoseconds)) ms",
            "  Requests/sec: \(fixed(report.callsPerSecond, 1))",
            "  Load:         \(configuration.connections) connection(s) × \(configuration.depth) in flight" +
                (configuration.rate.map { ", limited to \(fixed($0, 0)) calls/s" } ?? ""),
            "  Client CPU:   \(fixed(report.clientCPUNanosecondsPerCall / 1000, 2)) µs per call",
            "",
            "Latency distribution:",
        ]
        for (label, fraction) in percentiles {
            lines.append("  \(label.padded(6)) in \(ms(latency.percentile(fraction))) ms")
        }
        lines += ["", "Response time histogram:"]
        let buckets = coarseHistogram(latency)
        let widest = buckets.map(\.count).max() ?? 1
        for bucket in buckets {
            let bar = String(repeating: "∎", count: widest == 0 ? 0 : Int((Double(bucket.count) / Double(widest) * 40).rounded(.up)))
            lines.append("  \(ms(bucket.upperMicros * 1000).padded(10)) [\(String(bucket.count).padded(9))] |\(bar)")
        }
        lines += ["", "Status code distribution:"]
        for (outcome, count) in report.outcomes.sorted(by: { $0.value > $1.value }) {
            lines.append("  [\(outcome)]   \(count) responses")
        }
        if !report.connectionErrors.isEmpty {
            lines += ["", "Connection errors:"]
            for (error, count) in Dictionary(grouping: report.connectionErrors, by: { $0 }).mapValues(\.count) {
                lines.append("  [\(count)] \(error)")
            }
        }
        return lines.joined(separator: "\n")
    }

    static func json(_ report: LoadReport, configuration: LoadConfiguration) -> String {
        let latency = report.latency
        var fields: [String] = [
            "\"count\":\(report.calls)",
            "\"durationSeconds\":\(fixed(report.durationSeconds, 3))",
            "\"callsPerSecond\":\(fixed(report.callsPerSecond, 1))",
            "\"connections\":\(configuration.connections)",
            "\"depth\":\(configuration.depth)",
            "\"clientCpuMicrosPerCall\":\(fixed(report.clientCPUNanosecondsPerCall / 1000, 3))",
        ]
        var latencyFields = [
            "\"fastest\":\(ms(latency.count > 0 ? latency.minNanoseconds : 0))",
            "\"slowest\":\(ms(latency.maxNanoseconds))",
            "\"mean\":\(ms(latency.meanNanoseconds))",
        ]
        for (label, fraction) in percentiles { latencyFields.append("\"\(label)\":\(ms(latency.percentile(fraction)))") }
        fields.append("\"latencyMs\":{\(latencyFields.joined(separator: ","))}")
        let histogram = coarseHistogram(latency).map { "{\"upToMs\":\(ms($0.upperMicros * 1000)),\"count\":\($0.count)}" }
        fields.append("\"histogram\":[\(histogram.joined(separator: ","))]")
        let outcomes = report.outcomes.keys.sorted().map { "\(Logger.jsonString($0)):\(report.outcomes[$0]!)" }
        fields.append("\"statuses\":{\(outcomes.joined(separator: ","))}")
        fields.append("\"connectionErrors\":[\(report.connectionErrors.map(Logger.jsonString).joined(separator: ","))]")
        return "{" + fields.joined(separator: ",") + "}"
    }

    static func csv(_ report: LoadReport) -> String {
        let latency = report.latency
        let header = "count,duration_s,calls_per_s,fastest_ms,slowest_ms,mean_ms,p50_ms,p90_ms,p99_ms,p999_ms,errors"
        let errors = report.outcomes.filter { $0.key != "OK" }.values.reduce(0, +) + UInt64(report.connectionErrors.count)
        let row = [
            "\(report.calls)", fixed(report.durationSeconds, 3), fixed(report.callsPerSecond, 1),
            ms(latency.count > 0 ? latency.minNanoseconds : 0), ms(latency.maxNanoseconds), ms(latency.meanNanoseconds),
            ms(latency.percentile(0.5)), ms(latency.percentile(0.9)), ms(latency.percentile(0.99)), ms(latency.percentile(0.999)),
            "\(errors)",
        ]
        return header + "\n" + row.joined(separator: ",")
    }

    private static let percentiles: [(String, Double)] = [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999)]

    /// About ten evenly spaced buckets between the fastest and slowest call.
    private static func coarseHistogram(_ latency: LatencyHistogram) -> [(upperMicros: UInt64, count: UInt64)] {
        let fine = latency.nonEmptyBuckets
        guard let first = fine.first, let last = fine.last else { return [] }
        let low = first.upperMicros, high = last.upperMicros
        let step = max(1, (high - low + 9) / 10)
        var coarse: [(upperMicros: UInt64, count: UInt64)] = []
        var edge = low
        var index = 0
        while edge <= high || index < fine.count {
            var count: UInt64 = 0
            while index < fine.count && fine[index].upperMicros <= edge {
                count += fine[index].count
                index += 1
            }
            coarse.append((edge, count))
            if edge > high { break }
            edge += step
        }
        return coarse
    }

    static func ms(_ nanoseconds: UInt64) -> String { fixed(Double(nanoseconds) / 1e6, 3) }

    static func fixed(_ value: Double, _ decimals: Int) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let whole = Int(scaled / scale)
        var fraction = String(Int(scaled - Double(whole) * scale))
        while fraction.count < decimals { fraction = "0" + fraction }
        return (value < 0 ? "-" : "") + (decimals > 0 ? "\(whole).\(fraction)" : "\(whole)")
    }
}

extension String {
    func padded(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
