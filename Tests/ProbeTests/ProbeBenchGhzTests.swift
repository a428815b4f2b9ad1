import TestSupport
import Testing

/// `rpc-probe bench` as ghz users type it: ghz's flags (`-n`, `-c`, `-z`, `--connections`, `-r`,
/// `--insecure`, `-O`, `-o`) against the real server, and how `-c` maps onto connections × depth.
@Suite("rpc-probe bench: ghz's flags")
struct ProbeBenchGhzTests {
    static let echo = "mrpc.diagnostics.v1.Diagnostics/Echo"

    @Test("-n, -c, --connections, --insecure and -O json: N calls, -c spread over the connections")
    func ghzFlags() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        let even = try probe.run(
            "bench", Self.echo, "--insecure", "-n", "60", "-c", "6", "--connections", "2", "-O", "json")
        #expect(even.isCleanSuccess, "\(even)")
        let report = try JSON(parsing: even.standardOutput)
        #expect(report["count"].int == 60)
        #expect(report["connections"].int == 2 && report["depth"].int == 3, "-c 6 over 2 connections: 3 each")

        // Not a multiple of the connections: rounded up, so each connection keeps as many in flight.
        let uneven = try probe.run("bench", Self.echo, "-n", "20", "-c", "10", "--connections", "3", "-O", "json")
        #expect(uneven.isCleanSuccess, "\(uneven)")
        let rounded = try JSON(parsing: uneven.standardOutput)
        #expect(rounded["connections"].int == 3 && rounded["depth"].int == 4)

        // -c alone: one connection, as ghz shares one by default.
        let single = try probe.run("bench", Self.echo, "-n", "10", "-c", "5")
        #expect(single.standardOutput.contains("  Load:         1 connection(s) × 5 in flight"), "\(single)")
    }

    @Test("-z takes Go's durations and -r limits the rate; -O csv")
    func durationAndRate() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let timed = try ProbeRunner(server).run("bench", Self.echo, "-z", "0m0.3s", "-r", "100", "-O", "csv")
        #expect(timed.isCleanSuccess, "\(timed)")
        let rows = timed.lines.map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        let seconds = try #require(Double(rows.first { $0.prefix(2) == ["summary", "duration_s"] }?[2] ?? ""))
        #expect(seconds >= 0.29 && seconds < 5, "\(seconds) s")
        #expect(rows.contains(["summary", "rps", "100.0"]), "\(timed.standardOutput)")
    }

    @Test("-o FILE holds the report and standard output stays empty; a FILE that cannot be made fails before any load")
    func outputFile() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        let path = server.dataDirectory.path + "/report.json"
        let written = try probe.run("bench", Self.echo, "-n", "15", "-O", "json", "-o", path)
        #expect(written.isCleanSuccess && written.standardOutput.isEmpty, "\(written)")
        #expect(try JSON(parsing: server.dataDirectory.read("report.json"))["count"].int == 15)

        let nowhere = try probe.run("bench", Self.echo, "-n", "15", "-o", server.dataDirectory.path + "/no/such/dir")
        #expect(nowhere.exitCode == 1, "\(nowhere)")
        #expect(nowhere.standardError.contains("-o: cannot create"), "\(nowhere)")
        #expect(nowhere.standardOutput.isEmpty)
    }

    @Test(
        "ghz's flags that contradict: -c with --depth, -c under the connections, --insecure with TLS (exit 2)",
        arguments: [
            (["-c", "4", "--depth", "2"], "-c (calls in flight in all, ghz's concurrency) and --depth"),
            (["-c", "2", "--connections", "3"], "-c 2 is fewer calls in flight than the 3 connections"),
            (["--insecure", "--tls"], "--insecure is ghz's plaintext, which contradicts the TLS flags"),
            (["-z", "10", "-n", "5"], "give --duration or --total, not both"),
            (["-O", "xml"], "-O: expected text, json, csv or html, got 'xml'"),
            (["-z", "1d"], "-z: '1d' is not a duration"),
        ])
    func contradictions(_ flags: [String], _ message: String) throws {
        let outcome = try ProbeRunner(address: "127.0.0.1:1", apiKey: "key").run(["bench", Self.echo] + flags)
        #expect(outcome.exitCode == 2, "\(outcome)")
        #expect(outcome.standardError.contains(message), "\(outcome)")
    }

    @Test("--insecure is bench's (ghz's plaintext); the other verbs keep grpcurl's advice and say where it works")
    func insecureBelongsToBench() throws {
        let offline = ProbeRunner(address: "127.0.0.1:1", apiKey: nil)
        for verb in [["list"], ["call", Self.echo], ["health"]] {
            let outcome = try offline.run(["-insecure"] + verb)
            #expect(outcome.exitCode == 2, "\(outcome)")
            #expect(
                outcome.standardError.contains(
                    "\(verb[0]): unknown flag -insecure: a grpcurl flag rpc-probe does not take; use "
                        + "--tls-insecure-skip-verify"), "\(outcome)")
            #expect(outcome.standardError.contains("bench takes --insecure as ghz does, meaning plaintext"))
        }
    }
}
