import ProtoSchema
import RPCCore

/// The outcome of one call as `call --emit-envelope` prints it: one JSON object with the method,
/// the status (code, its name, the `ERR_…` code, message, details), the response or stream
/// messages, and where the time went.
///
/// Every failure that has a status is an envelope: a refused connection (UNAVAILABLE), a refused
/// API key (UNAUTHENTICATED), a missing reflection service, a deadline, the server's own errors.
/// Failures before any status exists (bad JSON, an unknown method, an unreadable file) are
/// messages on standard error with exit code 1 instead.
struct Envelope {
    /// The method's call path ("/pkg.Service/Method"), or the name as given when it was never resolved.
    var method: String
    /// nil for OK.
    var failure: RPCError?
    /// True for a server-streaming method: `messages` is printed instead of `response`.
    var streaming = false
    /// The response (unary) or each stream message, as compact JSON.
    var responses: [String] = []
    var timing = Timing()

    /// Milliseconds per phase; nil for a phase that did not happen.
    struct Timing {
        /// TCP connect and handshake (HELLO → HELLO_ACK).
        var connectMs: Double?
        /// Reading `--protoset` files or the reflection call.
        var schemaMs: Double?
        /// From sending the call to its final status.
        var callMs: Double?
        /// The whole verb.
        var totalMs = 0.0
    }

    /// The envelope as one line of JSON.
    var json: String {
        let error = failure ?? RPCError(code: .ok, errorCode: "", message: "")
        let details = error.details.keys.sorted().map {
            "\(Logger.jsonString($0)):\(Logger.jsonString(error.details[$0]!))"
        }
        let status =
            "{\"code\":\(error.code.rawValue),\"codeName\":\(Logger.jsonString(error.code.name)),"
            + "\"errorCode\":\(Logger.jsonString(error.errorCode)),\"message\":\(Logger.jsonString(error.message)),"
            + "\"details\":{\(details.joined(separator: ","))}}"
        let body =
            streaming
            ? "\"messages\":[\(responses.joined(separator: ","))]"
            : "\"response\":\(responses.first ?? "null")"
        let phases = [
            ("connectMs", timing.connectMs), ("schemaMs", timing.schemaMs), ("callMs", timing.callMs),
            ("totalMs", timing.totalMs),
        ]
        .map { name, value in "\"\(name)\":" + (value.map { BenchReport.fixed($0, 3) } ?? "null") }
        return
            "{\"method\":\(Logger.jsonString(method)),\"status\":\(status),\(body),\"timing\":{\(phases.joined(separator: ","))}}"
    }

    /// A failed call for people, on standard error (grpcurl's layout, plus the `ERR_…` code and details).
    static func text(_ error: RPCError) -> String {
        var lines = ["ERROR:", "  Code: \(error.code.name) (\(error.code.rawValue))"]
        if !error.errorCode.isEmpty { lines.append("  Error code: \(error.errorCode)") }
        lines.append("  Message: \(error.message)")
        for key in error.details.keys.sorted() { lines.append("  Detail: \(key)=\(error.details[key]!)") }
        return lines.joined(separator: "\n")
    }

    /// The call path of a method name as typed: "pkg.Service/Method" and "pkg.Service.Method"
    /// become "/pkg.Service/Method" (used before the schema could resolve it).
    static func path(forName name: String) -> String {
        var symbol = name.hasPrefix(".") ? String(name.dropFirst()) : name
        if symbol.hasPrefix("/") { return symbol }
        if !symbol.contains("/"), let dot = symbol.lastIndex(of: ".") {
            symbol.replaceSubrange(dot...dot, with: "/")
        }
        return "/" + symbol
    }
}
