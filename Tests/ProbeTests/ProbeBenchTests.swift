internal import Glibc
import ModerationMessages
import RPCMessages
import TestSupport
import Testing

/// `rpc-probe bench`: short `--total` runs against the real server, the report in all three
/// formats with the same figures, `{{n}}` templating, the rate limit, and the status
/// distribution when calls fail.
@Suite("rpc-probe bench")
struct ProbeBenchTests {
    static let echo = "mrpc.diagnostics.v1.Diagnostics/Echo"

    @Test("text: summary, latency distribution, histogram and status distribution, as ghz prints them")
    func text() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let outcome = try ProbeRunner(server).run("bench", Self.echo, "-d", #"{"payload":"AAEC"}"#, "--total", "40")
        #expect(outcome.isCleanSuccess, "\(outcome)")
        let text = outcome.standardOutput
        for line in [
            "Summary:", "  Method:       /mrpc.diagnostics.v1.Diagnostics/Echo", "  Count:        40",
            "  Requests/sec: ",
            "  Load:         1 connection(s) × 1 in flight", "Latency distribution:", "  p50    in ", "  p90    in ",
            "  p99    in ", "  p99.9  in ", "Response time histogram", "Status code distribution:",
            "  [OK]   40 responses",
        ] {
            #expect(text.contains(line), "\(line) in:\n\(text)")
        }
        let bars = outcome.lines.drop { !$0.hasPrefix("Response time histogram") }.dropFirst().prefix { !$0.isEmpty }
        let counts = bars.compactMap { line in line.split(separator: "[").dropFirst().first?.split(separator: "]").first
        }
        .compactMap { Int($0.filter { $0 != " " }) }
        #expect(counts.reduce(0, +) == 40, "the histogram holds every call: \(bars)")
    }

    @Test("json: count, duration, calls/s, latency figures, a histogram summing to the count, statuses with codes")
    func json() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let outcome = try ProbeRunner(server).run(
            "bench", Self.echo, "--total", "60", "--conns", "2", "--depth", "3", "--threads", "2", "--format", "json")
        #expect(outcome.isCleanSuccess, "\(outcome)")
        #expect(outcome.lines.count == 1)
        let report = try JSON(parsing: outcome.standardOutput)
        #expect(
            report.keys == [
                "method", "count", "errors", "durationSeconds", "callsPerSecond", "connections", "depth", "rps",
                "warmupSeconds", "clientCpuMicrosPerCall", "requests", "latencyMs", "histogram", "statuses",
                "connectionErrors",
            ])
        #expect(report["requests"]["distinct"].int == 1 && report["requests"]["sent"].int == 60)
        #expect(report["requests"]["repeated"].bool == true, "one request, sent 60 times")
        #expect(report["method"].string == "/mrpc.diagnostics.v1.Diagnostics/Echo")
        #expect(report["count"].int == 60)
        #expect(report["errors"].int == 0)
        #expect(report["connections"].int == 2)
        #expect(report["depth"].int == 3)
        #expect(report["rps"].isNull)
        let duration = try #require(report["durationSeconds"].double)
        let rate = try #require(report["callsPerSecond"].double)
        #expect(duration > 0 && rate > 0)
        let latency = report["latencyMs"]
        #expect(latency.keys == ["fastest", "slowest", "mean", "p50", "p90", "p99", "p99.9"])
        let figures = latency.keys.compactMap { latency[$0].double }
        #expect(figures.count == 7)
        let fastest = figures[0]
        let slowest = figures[1]
        #expect(fastest > 0 && fastest <= slowest)
        for percentile in figures[3...] { #expect(percentile >= fastest && percentile <= slowest) }
        #expect(figures[3] <= figures[4] && figures[4] <= figures[5] && figures[5] <= figures[6])
        let buckets = report["histogram"].array
        #expect(!buckets.isEmpty && buckets.count <= 11)
        #expect(buckets.compactMap { $0["count"].int }.reduce(0, +) == 60)
        let bounds = buckets.compactMap { $0["upToMs"].double }
        #expect(bounds == bounds.sorted() && (bounds.last ?? 0) >= slowest - 0.001)
        #expect(report["statuses"].array.count == 1)
        #expect(report["statuses"][0]["code"].int == 0)
        #expect(report["statuses"][0]["codeName"].string == "OK")
        #expect(report["statuses"][0]["count"].int == 60)
        #expect(report["connectionErrors"].array.isEmpty && report["connectionErrors"].exists)
    }

    @Test("csv: one section,name,value row per figure — the same figures as json")
    func csv() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let outcome = try ProbeRunner(server).run("bench", Self.echo, "--total", "30", "--format", "csv")
        #expect(outcome.isCleanSuccess, "\(outcome)")
        let rows = outcome.lines.map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        #expect(rows.first == ["section", "name", "value"])
        #expect(rows.dropFirst().allSatisfy { $0.count == 3 }, "\(outcome.standardOutput)")
        func value(_ section: String, _ name: String) -> String? {
            rows.first { $0[0] == section && $0[1] == name }?[2]
        }
        #expect(value("summary", "method") == "/mrpc.diagnostics.v1.Diagnostics/Echo")
        #expect(value("summary", "count") == "30")
        #expect(value("summary", "errors") == "0")
        #expect(value("summary", "rps") == "")
        #expect(Double(value("summary", "calls_per_s") ?? "") ?? 0 > 0)
        for name in ["fastest", "slowest", "mean", "p50", "p90", "p99", "p99.9"] {
            #expect(Double(value("latency_ms", name) ?? "") != nil, "latency_ms,\(name)")
        }
        let histogram = rows.filter { $0[0] == "histogram_ms" }
        #expect(histogram.compactMap { Int($0[2]) }.reduce(0, +) == 30)
        #expect(value("status", "OK") == "30")
    }

    @Test("{{n}} makes --variants distinct requests; failed calls are counted by status and ERR_ code and exit 1")
    func templatingAndFailures() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        let created = try probe.run(
            "bench", moderation("CreateUser"), "-d", #"{"uid":"user{{n}}","name":"User {{n}}"}"#,
            "--variants", "5", "--total", "5", "--format", "json")
        #expect(created.isCleanSuccess, "five distinct users, each created once: \(created)")
        let first = try JSON(parsing: created.standardOutput)
        #expect(first["statuses"][0]["codeName"].string == "OK" && first["statuses"][0]["count"].int == 5)
        let last = try probe.run("call", moderation("GetUser"), "-d", #"{"uid":"user4"}"#)
        #expect(try message(GetUserResponse.self, fromJSON: last.standardOutput).user?.name == "User 4")
        #expect(try probe.run("call", moderation("GetUser"), "-d", #"{"uid":"user5"}"#).exitCode == 64 + 5)

        let again = try probe.run(
            "bench", moderation("CreateUser"), "-d", #"{"uid":"user{{n}}"}"#, "--variants", "5", "--total", "10",
            "--format", "json")
        #expect(again.exitCode == 1, "every call failed: \(again)")
        let report = try JSON(parsing: again.standardOutput)
        #expect(report["count"].int == 10)
        #expect(report["errors"].int == 10)
        #expect(report["statuses"][0]["code"].int == 6)
        #expect(report["statuses"][0]["codeName"].string == "ALREADY_EXISTS")
        #expect(report["statuses"][0]["errorCode"].string == "ERR_UID_ALREADY_EXISTS")
        #expect(report["statuses"][0]["count"].int == 10)

        let text = try probe.run(
            "bench", moderation("GetUser"), "-d", #"{"uid":"user{{n}}"}"#, "--variants", "10", "--total", "10")
        #expect(text.exitCode == 1)
        #expect(text.standardOutput.contains("  [OK]   5 responses"), "\(text)")
        #expect(text.standardOutput.contains("  [NOT_FOUND ERR_UID_NOT_FOUND]   5 responses"), "\(text)")
        let csv = try probe.run(
            "bench", moderation("GetUser"), "-d", #"{"uid":"user{{n}}"}"#, "--variants", "10", "--total", "10",
            "--format", "csv")
        #expect(csv.standardOutput.contains("\nstatus,NOT_FOUND ERR_UID_NOT_FOUND,5"), "\(csv)")
        #expect(csv.standardOutput.contains("\nsummary,errors,5"), "\(csv)")

        let bad = try probe.run(
            "bench", moderation("GetUser"), "-d", #"{"uid":{{n}}}"#, "--variants", "2", "--total", "2")
        #expect(bad.exitCode == 1)
        #expect(bad.standardError.contains("(variant 0)"), "\(bad)")
    }

    @Test("--rps limits the rate; --warmup and the limit are reported; --duration measures for that long")
    func rateWarmupAndDuration() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        let limited = try probe.run(
            "bench", Self.echo, "--rps", "40", "--total", "10", "--warmup", "100ms", "--format", "json")
        #expect(limited.isCleanSuccess, "\(limited)")
        let report = try JSON(parsing: limited.standardOutput)
        #expect(report["rps"].double == 40)
        #expect(report["warmupSeconds"].double == 0.1)
        // 10 calls 25 ms apart take at least 9 intervals.
        #expect(try #require(report["durationSeconds"].double) >= 0.2, "\(limited.standardOutput)")
        #expect(try #require(report["callsPerSecond"].double) <= 48)

        let timed = try probe.run("bench", Self.echo, "--duration", "300ms", "--rps", "100", "--format", "json")
        #expect(timed.isCleanSuccess, "\(timed)")
        let measured = try JSON(parsing: timed.standardOutput)
        let seconds = try #require(measured["durationSeconds"].double)
        #expect(seconds >= 0.29 && seconds < 5, "\(seconds) s")
        #expect(try #require(measured["count"].int) <= 40)
    }

    @Test(
        "usage errors exit 2: --duration with --total, a streaming method, a bad --format or --rps; an unreachable server 78"
    )
    func usageErrors() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        for (arguments, message) in [
            (["bench", Self.echo, "--duration", "1s", "--total", "5"], "give --duration or --total, not both"),
            (["bench", moderation("Subscribe"), "--total", "1"], "is a server-streaming method"),
            (["bench", Self.echo, "--format", "xml"], "--format: expected text, json, csv or html, got 'xml'"),
            (["bench", Self.echo, "--rps", "0"], "--rps: must be more than 0"),
            (["bench"], "bench: expected one METHOD"),
        ] {
            let outcome = try probe.run(arguments)
            #expect(outcome.exitCode == 2, "\(arguments): \(outcome)")
            #expect(outcome.standardError.contains(message), "\(arguments): \(outcome)")
        }
        let unreachable = try ProbeRunner(address: "127.0.0.1:\(try UnusedPort.find())", apiKey: "key")
            .run(
                "--protoset", try server.dataDirectory.write(RPCSchema.fileDescriptorSet, to: "set.pb"), "bench",
                Self.echo, "--total", "1")
        #expect(unreachable.exitCode == 64 + 14, "\(unreachable)")
    }
    @Test("--grpc: Echo over 2 HTTP/2 connections × 4 streams gives N OK calls and the same report; json parses")
    func grpcEcho() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let grpc = try ProbeRunner.grpc(server)
        let text = try grpc.run(
            "bench", Self.echo, "-d", #"{"payload":"AAEC"}"#, "--conns", "2", "--depth", "4", "--total", "300")
        #expect(text.isCleanSuccess, "\(text)")
        for line in [
            "  Method:       /mrpc.diagnostics.v1.Diagnostics/Echo", "  Count:        300",
            "  Load:         2 connection(s) × 4 in flight", "  p99    in ", "Response time histogram",
            "  [OK]   300 responses",
        ] {
            #expect(text.standardOutput.contains(line), "\(line) in:\n\(text.standardOutput)")
        }

        let json = try grpc.run(
            "bench", Self.echo, "--conns", "2", "--depth", "4", "--threads", "2", "--total", "200", "--warmup",
            "100ms", "--format", "json")
        #expect(json.isCleanSuccess, "\(json)")
        let report = try JSON(parsing: json.standardOutput)
        #expect(report["method"].string == "/mrpc.diagnostics.v1.Diagnostics/Echo")
        #expect(report["count"].int == 200)
        #expect(report["errors"].int == 0)
        #expect(report["connections"].int == 2 && report["depth"].int == 4)
        #expect(report["histogram"].array.compactMap { $0["count"].int }.reduce(0, +) == 200)
        #expect(report["statuses"].array.count == 1)
        #expect(report["statuses"][0]["codeName"].string == "OK" && report["statuses"][0]["count"].int == 200)
        #expect(report["connectionErrors"].array.isEmpty && report["connectionErrors"].exists)
        let fastest = try #require(report["latencyMs"]["fastest"].double)
        #expect(fastest > 0 && fastest <= (report["latencyMs"]["p50"].double ?? 0))

        // --rps paces the streams as it paces framed calls.
        let paced = try grpc.run(
            "bench", Self.echo, "--conns", "2", "--depth", "2", "--rps", "200", "--duration", "500ms", "--format",
            "json")
        #expect(paced.isCleanSuccess, "\(paced)")
        let count = try #require(try JSON(parsing: paced.standardOutput)["count"].int)
        #expect(count >= 60 && count <= 110, "about 100 calls in 0.5 s at 200/s: \(count)")
    }

    @Test("--grpc: failed calls are counted by the status and ERR_ code of their trailers, and exit 1")
    func grpcFailures() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let grpc = try ProbeRunner.grpc(server)
        let missing = try grpc.run(
            "bench", "moderation.v1.Moderation/GetGroup", "-d", #"{"guid":"nosuch"}"#, "--conns", "2", "--depth", "4",
            "--total", "40", "--format", "json")
        #expect(missing.exitCode == 1, "every call failed: \(missing)")
        let report = try JSON(parsing: missing.standardOutput)
        #expect(report["count"].int == 40 && report["errors"].int == 40)
        #expect(report["statuses"].array.count == 1)
        #expect(report["statuses"][0]["code"].int == 5)
        #expect(report["statuses"][0]["codeName"].string == "NOT_FOUND")
        #expect(report["statuses"][0]["errorCode"].string == "ERR_GROUP_NOT_FOUND")
        #expect(report["statuses"][0]["count"].int == 40)

        // Half the variants exist: both outcomes, counted apart, as on the framed listener.
        let created = try grpc.run(
            "bench", moderation("CreateUser"), "-d", #"{"uid":"user{{n}}"}"#, "--variants", "3", "--total", "3")
        #expect(created.isCleanSuccess, "\(created)")
        let mixed = try grpc.run(
            "bench", moderation("GetUser"), "-d", #"{"uid":"user{{n}}"}"#, "--variants", "6", "--total", "12")
        #expect(mixed.exitCode == 1)
        #expect(mixed.standardOutput.contains("  [OK]   6 responses"), "\(mixed)")
        #expect(mixed.standardOutput.contains("  [NOT_FOUND ERR_UID_NOT_FOUND]   6 responses"), "\(mixed)")

    }

    @Test("--grpc: --depth over the server's SETTINGS_MAX_CONCURRENT_STREAMS stops before any load, naming it")
    func grpcDepthOverStreamLimit() throws {
        let server = try ModerationServerProcess(arguments: ["--max-concurrent-calls", "8"])
        defer { _ = try? server.stop() }
        let grpc = try ProbeRunner.grpc(server)
        let over = try grpc.run("bench", Self.echo, "--depth", "9", "--total", "10")
        #expect(over.exitCode == 64 + 3, "INVALID_ARGUMENT: \(over)")
        #expect(over.standardOutput.isEmpty, "no report: \(over)")
        #expect(over.standardError.contains("ERR_INVALID_ARGUMENT"), "\(over)")
        #expect(
            over.standardError.contains(
                "--depth 9 is more than the 8 concurrent streams the server allows per connection "
                    + "(its SETTINGS_MAX_CONCURRENT_STREAMS)"), "\(over)")
        let ghz = try grpc.run("bench", Self.echo, "-c", "20", "--connections", "2", "-n", "10")
        #expect(ghz.exitCode == 64 + 3, "\(ghz)")
        #expect(
            ghz.standardError.contains(
                "give --depth 8 or less, and more --conns for more calls in flight "
                    + "(-c 20 over 2 connection(s) is --depth 10)"), "\(ghz)")
        let at = try grpc.run("bench", Self.echo, "--depth", "8", "--conns", "2", "--total", "100")
        #expect(at.isCleanSuccess, "--depth at the limit runs: \(at)")
        #expect(at.standardOutput.contains("  [OK]   100 responses"), "\(at)")
    }

    @Test("--grpc: a server that goes away mid-run is a connection error in the report, and exit 1")
    func grpcServerGone() throws {
        let server = try ModerationServerProcess()
        let grpc = try ProbeRunner.grpc(server)
        // The server is stopped (SIGTERM: GOAWAY, then its sockets close) by this thread only.
        nonisolated(unsafe) let stopping = server
        let stopper = Background<Bool> {
            usleep(700_000)
            return (try? stopping.stop()) != nil
        }
        let run = try grpc.run("bench", Self.echo, "--duration", "3s", "--format", "json")
        #expect(try stopper.wait())
        #expect(run.exitCode == 1, "\(run)")
        let report = try JSON(parsing: run.standardOutput)
        #expect(!report["connectionErrors"].array.isEmpty, "\(run)")
        #expect((report["count"].int ?? 0) > 0, "calls before the server left are measured: \(run)")
    }
}
