internal import Glibc
import HTTP2Support
import ProtoBridge
import RPCCore
import RPCMessages
import TestSupport
import Testing

/// `/metrics` of a real `moderation-server` process, scraped as Prometheus does: the standard
/// `process_…` series, the build's info, and the counters of refused handshakes and rate-limited
/// calls, each moved by exactly one by the event it counts.
@Suite("Metrics scraped from a running server", .serialized)
struct MetricsScrapeTests {
    static let handshakes = "mrpc_handshakes_refused_total"

    static func handshake(_ listener: String, _ reason: String) -> String {
        "\(handshakes){listener=\"\(listener)\",reason=\"\(reason)\"}"
    }

    @Test("process_…, build info and the new counters are there with their types and plausible values")
    func namesTypesAndValues() throws {
        let server = try ModerationServerProcess(arguments: ["--metrics-listen", "127.0.0.1:0"])
        defer { _ = try? server.stop() }
        let scrape = try MetricsScrape(port: server.metricsPort())
        let expected: [(String, String)] = [
            ("process_cpu_seconds_total", "counter"), ("process_start_time_seconds", "gauge"),
            ("process_open_fds", "gauge"), ("process_max_fds", "gauge"), ("process_virtual_memory_bytes", "gauge"),
            ("process_virtual_memory_max_bytes", "gauge"), ("process_resident_memory_bytes", "gauge"),
            ("moderation_build_info", "gauge"), (Self.handshakes, "counter"),
            ("moderation_rate_limited_calls_total", "counter"), ("mrpc_auth_failures_total", "counter"),
        ]
        for (name, type) in expected {
            #expect(scrape.types[name] == type, "# TYPE of \(name)")
            #expect(scrape.text.contains("# HELP \(name) "), "# HELP of \(name)")
        }
        #expect(scrape["process_cpu_seconds_total"] > 0)
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let started = scrape["process_start_time_seconds"]
        #expect(
            started <= Double(now.tv_sec) + 1 && started > Double(now.tv_sec) - 3_600, "\(started) vs \(now.tv_sec)")
        let open = scrape["process_open_fds"]
        #expect(open >= 3 && open <= scrape["process_max_fds"], "open \(open), max \(scrape["process_max_fds"])")
        #expect(scrape["process_virtual_memory_bytes"] >= scrape["process_resident_memory_bytes"])
        #expect(scrape["process_resident_memory_bytes"] > 0)
        let info = scrape.values.filter { $0.key.hasPrefix("moderation_build_info{") }
        #expect(info.count == 1)
        // A test build is never a release: a clean checkout of a v… tag is.
        let key = info.first?.key ?? ""
        #expect(key.hasPrefix("moderation_build_info{version=\"0.1.0-dev"), "\(key)")
        #expect(key.contains(",store=\"sqlite\",swift=\"6."), "\(key)")
        let revision = key.firstRange(of: "revision=\"").map { key[$0.upperBound...].prefix(40) } ?? ""
        #expect(revision.count == 40 && revision.allSatisfy(\.isHexDigit), "a git commit: \(key)")
        #expect(info.first?.value == 1)
        for reason in ["bad_key", "bad_preface", "bad_hello", "timeout"] {
            #expect(scrape.values[Self.handshake("mrpc", reason)] == 0, "mrpc \(reason) shown from zero")
        }
        for reason in ["bad_key", "bad_preface", "timeout"] {
            #expect(scrape.values[Self.handshake("grpc", reason)] == 0, "grpc \(reason) shown from zero")
        }
        #expect(scrape.values[Self.handshake("grpc", "bad_hello")] == nil, "gRPC has no HELLO")
        #expect(
            scrape.values["moderation_rate_limited_calls_total{app=\"\(ModerationServerProcess.appID)\"}"] == 0,
            "each app with a key shown from zero")
    }

    @Test("a wrong key, a bad preface, a bad HELLO and a rate-limited call each count once, on their listener")
    func refusalsCountOnce() throws {
        let server = try ModerationServerProcess(arguments: [
            "--metrics-listen", "127.0.0.1:0", "--rate-limit", "1", "--rate-burst", "1",
        ])
        defer { _ = try? server.stop() }
        let metrics = try server.metricsPort()
        let grpcPort = try #require(server.grpcAddress.flatMap { UInt16($0.split(separator: ":").last ?? "") })

        /// Runs `event`, then waits until `series` has moved, and checks that it moved by exactly
        /// one and that no other refusal counter moved.
        func expectOne(_ series: String, _ what: String, _ event: () throws -> Void) throws {
            let before = try MetricsScrape(port: metrics)
            try event()
            var after = before
            let moved = try waitUntil(timeoutMs: 5_000, pollMs: 20) {
                after = try MetricsScrape(port: metrics)
                return after[series] != before[series]
            }
            #expect(moved, "\(what): \(series) did not move")
            #expect(after[series] - before[series] == 1, "\(what): \(series) \(before[series]) → \(after[series])")
            let others = after.values.filter {
                ($0.key.hasPrefix(Self.handshakes) || $0.key.hasPrefix("moderation_rate_limited_calls_total"))
                    && $0.key != series && $0.value != before[$0.key]
            }
            #expect(others.isEmpty, "\(what) moved \(others) too")
        }

        try expectOne(Self.handshake("mrpc", "bad_key"), "a HELLO with a wrong key") {
            let raw = try RawConnection(port: server.port)
            try raw.send(Frames.opening(apiKey: "\(ModerationServerProcess.appID):not-the-key"))
            #expect(try raw.expectFrame().goaway().status?.code == StatusCode.unauthenticated.rawValue)
        }
        let auth = try MetricsScrape(port: metrics)
        #expect(auth["mrpc_auth_failures_total"] == auth[Self.handshake("mrpc", "bad_key")], "the same count")

        try expectOne(Self.handshake("mrpc", "bad_preface"), "a wrong preface") {
            let raw = try RawConnection(port: server.port)
            try raw.send([0x16, 0x03, 0x01, 0x00, 0x20, 0, 0, 0])
            _ = try raw.expectClose()
        }
        try expectOne(Self.handshake("grpc", "bad_preface"), "an HTTP/1 request") {
            let raw = try RawConnection(port: server.port)
            try raw.send(Array("GET / HTTP/1.1\r\n\r\n".utf8))
            _ = try raw.readUntilClose()
        }
        try expectOne(Self.handshake("mrpc", "bad_preface"), "a protocol version the server does not speak") {
            let raw = try RawConnection(port: server.port)
            try raw.send([0x4D, 0x52, 0x50, 0x43, 0x00, 0x02, 0x00, 0x00])
            _ = try raw.expectClose()
        }
        try expectOne(Self.handshake("mrpc", "bad_hello"), "a PING before HELLO") {
            let raw = try RawConnection(port: server.port)
            try raw.send(Preface.bytes + Frames.ping())
            _ = try raw.expectClose()
        }
        try expectOne(Self.handshake("grpc", "bad_preface"), "garbage on the gRPC listener") {
            let raw = try RawConnection(port: grpcPort)
            try raw.send(Array(repeating: 0x55, count: 32))
            _ = try raw.expectClose()
        }
        try expectOne(Self.handshake("grpc", "bad_key"), "a gRPC request with a wrong key") {
            let raw = try RawConnection(port: grpcPort)
            let client = HTTP2TestClient()
            client.request(
                headers: HTTP2TestClient.requestHeaders(path: DiagnosticsMethods.echo.path) + [
                    HTTP2Header("authorization", "Bearer \(ModerationServerProcess.appID):not-the-key")
                ])
            try raw.send(client.output())
        }
        try expectOne(
            "moderation_rate_limited_calls_total{app=\"\(ModerationServerProcess.appID)\"}", "a call over the rate"
        ) {
            let raw = try RawConnection(port: server.port)
            try raw.handshake(apiKey: "\(ModerationServerProcess.appID):\(ModerationServerProcess.apiKey)")
            // One call a second with a burst of one: of calls sent back to back, the first or
            // the second is refused; stop at the first refusal.
            for stream in stride(from: UInt32(1), through: 9, by: 2) {
                let reply = try raw.roundTrip(Frames.echo(streamID: stream, [1]), streamID: stream)
                if let error = try reply.replyError() {
                    #expect(error.errorCode == RuntimeErrorCode.rateLimited.name)
                    return
                }
            }
            Issue.record("no call was refused for the rate")
        }
    }
}
