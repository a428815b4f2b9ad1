internal import Glibc
import RPCCore
import TestSupport
import Testing

@testable import ServerApp

/// The call metrics under go-grpc-prometheus's names and labels, with the wire beside them, and
/// `moderation_errors_total`: fed as the runtime feeds them, and scraped from a real server after
/// calls on both wires.
@Suite("Metrics under the standard gRPC names")
struct StandardMetricNamesTests {
    static func labels(_ service: String, _ method: String, type: String = "unary", wire: String) -> String {
        "grpc_type=\"\(type)\",grpc_service=\"\(service)\",grpc_method=\"\(method)\",wire=\"\(wire)\""
    }

    @Test("started, handled by code, handling time, messages received and sent, ERR_ codes: per method and wire")
    func fedAsTheRuntimeFeeds() {
        let metrics = ServerMetrics(
            methods: ["/a.v1.S/Unary", "/a.v1.S/Stream"], serverStreaming: [false, true], accessLog: nil,
            gauges: { [] })
        func end(_ method: Int?, _ path: String, _ code: StatusCode, _ errorCode: String = "", wire: WireKind) {
            metrics.callEnded(
                CallRecord(
                    methodIndex: method, method: path, appID: "app", onBehalfOf: "", requestID: "", peer: "",
                    streamID: 1, code: code, errorCode: errorCode, durationNanoseconds: 2_000_000, wire: wire))
        }
        // Two unary calls on our wire (one refused for its argument), one on gRPC; a stream of three.
        for (code, errorCode) in [(StatusCode.ok, ""), (.invalidArgument, "ERR_INVALID_ARGUMENT")] {
            metrics.callStarted(methodIndex: 0, wire: .mrpc)
            metrics.requestReceived(methodIndex: 0, wire: .mrpc)
            end(0, "/a.v1.S/Unary", code, errorCode, wire: .mrpc)
        }
        metrics.callStarted(methodIndex: 0, wire: .grpc)
        metrics.requestReceived(methodIndex: 0, wire: .grpc)
        end(0, "/a.v1.S/Unary", .ok, wire: .grpc)
        metrics.callStarted(methodIndex: 1, wire: .grpc)
        metrics.requestReceived(methodIndex: 1, wire: .grpc)
        for _ in 0..<3 { metrics.streamMessage(encodedBytes: 10, wireBytes: 10, methodIndex: 1, wire: .grpc) }
        // A stream still open: started, not handled.
        metrics.callStarted(methodIndex: 1, wire: .grpc)

        let scrape = MetricsScrape(text: metrics.render())
        let unaryMRPC = Self.labels("a.v1.S", "Unary", wire: "mrpc")
        let unaryGRPC = Self.labels("a.v1.S", "Unary", wire: "grpc")
        let stream = Self.labels("a.v1.S", "Stream", type: "server_stream", wire: "grpc")
        let expected: [(String, Double)] = [
            ("grpc_server_started_total{\(unaryMRPC)}", 2),
            ("grpc_server_handled_total{\(unaryMRPC),grpc_code=\"OK\"}", 1),
            ("grpc_server_handled_total{\(unaryMRPC),grpc_code=\"InvalidArgument\"}", 1),
            ("grpc_server_msg_received_total{\(unaryMRPC)}", 2),
            ("grpc_server_msg_sent_total{\(unaryMRPC)}", 1),
            ("grpc_server_handling_seconds_count{\(unaryMRPC)}", 2),
            ("grpc_server_handling_seconds_bucket{\(unaryMRPC),le=\"0.001\"}", 0),
            ("grpc_server_handling_seconds_bucket{\(unaryMRPC),le=\"0.0025\"}", 2),
            ("grpc_server_handling_seconds_bucket{\(unaryMRPC),le=\"+Inf\"}", 2),
            ("grpc_server_handling_seconds_sum{\(unaryMRPC)}", 0.004),
            ("grpc_server_started_total{\(unaryGRPC)}", 1),
            ("grpc_server_handled_total{\(unaryGRPC),grpc_code=\"OK\"}", 1),
            ("grpc_server_started_total{\(stream)}", 2),
            ("grpc_server_msg_received_total{\(stream)}", 1),
            ("grpc_server_msg_sent_total{\(stream)}", 3),
            ("moderation_errors_total{method=\"/a.v1.S/Unary\",code=\"ERR_INVALID_ARGUMENT\"}", 1),
        ]
        for (series, value) in expected {
            #expect(scrape.values[series] == value, "\(series): \(String(describing: scrape.values[series]))")
        }
        #expect(scrape.values["grpc_server_handled_total{\(stream),grpc_code=\"OK\"}"] == nil, "still open")
        #expect(scrape.types["grpc_server_handling_seconds"] == "histogram")
        for counter in [
            "grpc_server_started_total", "grpc_server_handled_total", "grpc_server_msg_received_total",
            "grpc_server_msg_sent_total", "moderation_errors_total",
        ] {
            #expect(scrape.types[counter] == "counter", "\(counter)")
        }
        // The older names still count the same calls.
        #expect(scrape.values["mrpc_calls_total{method=\"/a.v1.S/Unary\",code=\"OK\",wire=\"mrpc\"}"] == 1)
        #expect(scrape.values["mrpc_call_duration_seconds_count{method=\"/a.v1.S/Unary\"}"] == 3)
    }

    @Test("a real server: calls over both wires show under their method, code and wire")
    func scrapedFromAServer() throws {
        let server = try ModerationServerProcess(arguments: ["--metrics-listen", "127.0.0.1:0"])
        defer { _ = try? server.stop() }
        let framed = ProbeRunner(server)
        let grpc = try ProbeRunner.grpc(server)
        let created = try framed.run("call", "moderation.v1.Moderation/CreateUser", "-d", #"{"uid":"m1"}"#)
        #expect(created.exitCode == 0, "\(created)")
        for probe in [framed, grpc] {
            _ = try probe.run("call", "moderation.v1.Moderation/GetUser", "-d", #"{"uid":"nobody"}"#)
        }
        let scrape = try MetricsScrape(port: server.metricsPort())
        let service = "moderation.v1.Moderation"
        let create = Self.labels(service, "CreateUser", wire: "mrpc")
        let expected: [(String, Double)] = [
            ("grpc_server_started_total{\(create)}", 1),
            ("grpc_server_handled_total{\(create),grpc_code=\"OK\"}", 1),
            ("grpc_server_msg_received_total{\(create)}", 1),
            ("grpc_server_msg_sent_total{\(create)}", 1),
            ("grpc_server_handling_seconds_count{\(create)}", 1),
            ("grpc_server_handled_total{\(Self.labels(service, "GetUser", wire: "mrpc")),grpc_code=\"NotFound\"}", 1),
            ("grpc_server_handled_total{\(Self.labels(service, "GetUser", wire: "grpc")),grpc_code=\"NotFound\"}", 1),
            ("grpc_server_msg_sent_total{\(Self.labels(service, "GetUser", wire: "grpc"))}", 0),
            ("moderation_errors_total{method=\"/moderation.v1.Moderation/GetUser\",code=\"ERR_UID_NOT_FOUND\"}", 2),
        ]
        for (series, value) in expected {
            #expect(scrape.values[series] == value, "\(series): \(String(describing: scrape.values[series]))")
        }
        #expect(scrape.values["moderation_store_available"] == 1)
        // A whole-app subscription: the fan-out's progress shows beside the log's head.
        let app = ModerationServerProcess.appID
        let watch = try framed.start(["watch", "--app"])
        let dispatched = "moderation_events_dispatched_seq{app=\"\(app)\"}"
        var seen = false
        _ = try framed.run(
            "--as", "m1", "call", "moderation.v1.Moderation/CreateGroup", "-d",
            #"{"guid":"mg","name":"M","type":"GROUP_TYPE_PUBLIC"}"#)
        for attempt in 0..<50 where !seen {
            _ = try framed.run("call", "moderation.v1.Moderation/CreateUser", "-d", #"{"uid":"w\#(attempt)"}"#)
            _ = try framed.run(
                "--as", "w\(attempt)", "call", "moderation.v1.Moderation/JoinGroup", "-d", #"{"guid":"mg"}"#)
            let now = try MetricsScrape(port: server.metricsPort())
            let head = now.values["moderation_action_log_head_seq{app=\"\(app)\"}"]
            seen = now.values[dispatched] != nil && now.values[dispatched] == head
        }
        #expect(seen, "the dispatched seq reaches the head while a subscription is open")
        watch.send(signal: SIGKILL)
        _ = try watch.finish(timeoutMs: 10_000)
    }
}
