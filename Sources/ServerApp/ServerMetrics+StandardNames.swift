import RPCCore
import Synchronization

/// The call metrics under the names and labels of go-grpc-prometheus, which existing gRPC
/// dashboards and alerts are written against, with a `wire` label beside them (`mrpc`, our
/// framed protocol; `grpc`, standard gRPC); and the service's `ERR_…` codes by method.
///
/// Every method counts here, the runtime's reflection and health included (`grpc_service` tells
/// them apart). A (wire, method) shows once it has had a call.
extension ServerMetrics {
    /// gRPC's code names as Go spells them (`codes.Code.String()`), which those dashboards match.
    static let goCodeNames = [
        "OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound", "AlreadyExists",
        "PermissionDenied", "ResourceExhausted", "FailedPrecondition", "Aborted", "OutOfRange", "Unimplemented",
        "Internal", "Unavailable", "DataLoss", "Unauthenticated",
    ]

    func renderStandardNames(into out: inout String) {
        func header(_ name: String, _ type: String, _ help: String) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }
        let series = seriesLabels()
        header("grpc_server_started_total", "counter", "RPCs started on the server, by method and wire.")
        for (slot, labels) in series { out += "grpc_server_started_total{\(labels)} \(started[slot])\n" }
        header("grpc_server_handled_total", "counter", "RPCs completed on the server, by method, code and wire.")
        for (slot, labels) in series {
            for code in 0..<Self.codes {
                let value = calls[slot * Self.codes + code] &+ internalCalls[slot * Self.codes + code]
                guard value > 0 else { continue }
                let name = code < Self.goCodeNames.count ? Self.goCodeNames[code] : "Unknown"
                out += "grpc_server_handled_total{\(labels),grpc_code=\"\(name)\"} \(value)\n"
            }
        }
        header(
            "grpc_server_handling_seconds", "histogram",
            "Time from a call's start to its end on the server, by method and wire.")
        let buckets = Self.durationBuckets.count + 1
        for (slot, labels) in series {
            var cumulative: UInt64 = 0
            for b in 0..<buckets {
                cumulative += histogram[slot * buckets + b]
                let bound = b < Self.durationBuckets.count ? "\(Self.durationBuckets[b])" : "+Inf"
                out += "grpc_server_handling_seconds_bucket{\(labels),le=\"\(bound)\"} \(cumulative)\n"
            }
            out += "grpc_server_handling_seconds_sum{\(labels)} \(Double(durationSum[slot]) / 1e9)\n"
            out += "grpc_server_handling_seconds_count{\(labels)} \(cumulative)\n"
        }
        header("grpc_server_msg_received_total", "counter", "Request messages received, by method and wire.")
        for (slot, labels) in series { out += "grpc_server_msg_received_total{\(labels)} \(requestsReceived[slot])\n" }
        header(
            "grpc_server_msg_sent_total", "counter",
            "Response messages sent (a unary call's reply, each message of a stream), by method and wire.")
        for (slot, labels) in series { out += "grpc_server_msg_sent_total{\(labels)} \(messagesSent[slot])\n" }

        header("moderation_errors_total", "counter", "Failed calls by method and ERR_… code.")
        let failures = errors.withLock { $0 }.sorted { ($0.key.method, $0.key.code) < ($1.key.method, $1.key.code) }
        for (key, count) in failures {
            out +=
                "moderation_errors_total{method=\"\(methods[key.method])\",code=\"\(Self.escape(key.code))\"} \(count)\n"
        }
    }

    /// The (wire, method) slots that have had a call, with their label text.
    private func seriesLabels() -> [(slot: Int, labels: String)] {
        var series: [(Int, String)] = []
        for (w, wire) in WireKind.allCases.enumerated() {
            for (m, path) in methods.enumerated() {
                let slot = w * methods.count + m
                guard started[slot] > 0 else { continue }
                let (service, method) = Self.serviceAndMethod(path)
                let type = serverStreaming[m] ? "server_stream" : "unary"
                series.append(
                    (
                        slot,
                        "grpc_type=\"\(type)\",grpc_service=\"\(service)\",grpc_method=\"\(method)\","
                            + "wire=\"\(Self.label(wire))\""
                    ))
            }
        }
        return series
    }

    /// "/pkg.Service/Method" as ("pkg.Service", "Method"); anything else as ("unknown", "unknown").
    static func serviceAndMethod(_ path: String) -> (service: Substring, method: Substring) {
        let parts = path.split(separator: "/")
        guard parts.count == 2, path.hasPrefix("/") else { return ("unknown", "unknown") }
        return (parts[0], parts[1])
    }
}
