import CommandLineSupport
import LoadGeneration
import ProtoSchema
import RPCCore
import RPCPosix

/// `rpc-probe [--grpc] HOST:PORT bench METHOD`: a ghz-class load test of one unary method, on the
/// framed protocol or (`--grpc`) standard gRPC.
enum BenchCommand: ProbeVerb {
    static let name = "bench"

    static let help = """
        usage: rpc-probe [flags] HOST:PORT bench METHOD [bench flags]

        Calls the unary METHOD over --conns connections with --depth calls in flight on each, as fast
        as replies come back (or at --rps), for --duration or --total calls, and reports the count,
        duration, calls/s, fastest/slowest/mean latency, p50/p90/p99/p99.9, a latency histogram and
        the distribution of status and ERR_ codes. ghz's spellings work too (-n, -c, -z,
        --connections, -r, --insecure, -O, -o).

        bench flags:
          -d JSON | -d @FILE | -d @-   the request as JSON (default {}), with ghz's template
                                       actions: {{.RequestNumber}} (0, 1, …), {{.UUID}} (random,
                                       one per request), {{newUUID}}, {{.TimestampUnix}},
                                       {{.TimestampUnixMilli}}, {{.TimestampUnixNano}},
                                       {{.Timestamp}}, {{.MethodName}}, {{.ServiceName}},
                                       {{.FullyQualifiedName}}, {{.InputName}}, {{.OutputName}};
                                       and rpc-probe's {{n}}, the request's number too
          --variants N                 requests made from -d before the load, sent in turn
                                       (default 1; when -d has per-request values, as many as
                                       --total, or --rps × the run's length, else 100000); the
                                       report says when the run sent some more than once
          --conns N, --connections N   connections (default 1)
          --depth N                    calls in flight per connection (default 1)
          -c N, --concurrency N        ghz's concurrency: N calls in flight in all, spread over the
                                       connections (--depth = N / connections, rounded up)
          -z D, --duration D           how long to measure, e.g. 10s, 500ms, 2m, 1m30s (default 10s)
          -n N, --total N              measure N calls instead of a duration (not with --duration)
          --warmup D                   load before measuring, not counted (default 0s)
          -r R, --rps R                at most R calls per second across all connections
                                       (default: no limit)
          --threads N                  client threads the connections are spread over (default 1)
          -O F, --format F             the report's format: text, json, csv, or html (one
                                       self-contained page with charts; default text)
          -o FILE, --output FILE       write the report to FILE (created or replaced) instead of
                                       standard output
          --insecure                   ghz's plaintext: rpc-probe's default, so it changes nothing;
                                       refused with a TLS flag (grpcurl's -insecure, skipping
                                       certificate checks, is --tls-insecure-skip-verify)

        With --grpc the load speaks standard gRPC: --conns HTTP/2 connections (h2c, plaintext) with --depth concurrent streams on each, one stream per call
        (its latency from submitting the request to the trailers), statuses read from the trailers
        (grpc-status and the ERR_ code in grpc-status-details-bin), --timeout sent as grpc-timeout.
        --depth may not exceed the streams the server allows per connection (its
        SETTINGS_MAX_CONCURRENT_STREAMS, moderation-server's --max-concurrent-calls): the load does
        not start then, and the error names the limit.

        Exit code: 0 when every measured call was OK; 1 when some failed (the report says which);
        64 + the status code when the load could not start (e.g. 78 when the server is unreachable,
        67 when --depth is over the gRPC server's stream limit).
        """

    /// What the bench flags set: the load, the request and the report's format.
    struct Flags {
        var configuration = LoadConfiguration()
        var data: String?
        /// `--variants`; nil when not given (`BenchRequests.count` decides).
        var variants: Int?
        var format = "text"
        /// `-o`: where the report goes; nil for standard output.
        var output: String?
        var durationGiven = false
        var depthGiven = false
        /// `-c`: calls in flight in all, ghz's concurrency; the depth is made from it.
        var concurrency: Int?
        /// `--insecure`: ghz's plaintext.
        var insecure = false
    }

    static let defaults = Flags()

    static let flags: [ProbeFlag<Flags>] = [
        ProbeFlag("-d", "--data") { flags, value in flags.data = value.text },
        ProbeFlag("--variants") { flags, value throws(ArgumentError) in
            flags.variants = try value.integer(in: 1...1_000_000)
        },
        ProbeFlag("--conns", "--connections") { flags, value throws(ArgumentError) in
            flags.configuration.connections = try value.integer(in: 1...10_000)
        },
        ProbeFlag("--depth") { flags, value throws(ArgumentError) in
            flags.configuration.depth = try value.integer(in: 1...10_000)
            flags.depthGiven = true
        },
        ProbeFlag("-c", "--concurrency") { flags, value throws(ArgumentError) in
            flags.concurrency = try value.integer(in: 1...1_000_000)
        },
        ProbeFlag("-z", "--duration") { flags, value throws(ArgumentError) in
            flags.configuration.durationSeconds = try value.duration()
            guard flags.configuration.durationSeconds > 0 else { throw value.error("must be more than 0") }
            flags.durationGiven = true
        },
        ProbeFlag("-n", "--total") { flags, value throws(ArgumentError) in
            flags.configuration.total = try value.integer(in: 1...Int(Int32.max))
        },
        ProbeFlag("--warmup") { flags, value throws(ArgumentError) in
            flags.configuration.warmupSeconds = try value.duration()
        },
        ProbeFlag("-r", "--rps") { flags, value throws(ArgumentError) in
            let rate = try value.nonNegativeNumber()
            guard rate > 0 else { throw value.error("must be more than 0") }
            flags.configuration.rate = rate
        },
        ProbeFlag("--threads") { flags, value throws(ArgumentError) in
            flags.configuration.threads = try value.integer(in: 1...256)
        },
        ProbeFlag("-O", "--format") { flags, value throws(ArgumentError) in
            guard ["text", "json", "csv", "html"].contains(value.text) else {
                throw value.error("expected text, json, csv or html, got '\(value.text)'")
            }
            flags.format = value.text
        },
        ProbeFlag("-o", "--output") { flags, value in flags.output = value.text },
        ProbeFlag("--insecure") { flags, on in flags.insecure = on },
    ]

    /// Calls in flight per connection: `--depth`, or ghz's `-c` spread over the connections.
    ///
    /// ghz's `-c` workers each keep one call in flight and share the connections evenly; here each
    /// connection keeps the same number in flight, so `-c` is rounded up to a multiple of the
    /// connections (`-c 10 --connections 3`: 3 × 4 = 12 in flight), as the report's load line shows.
    static func depth(_ flags: Flags) throws(ProbeError) -> Int {
        guard let concurrency = flags.concurrency else { return flags.configuration.depth }
        let connections = flags.configuration.connections
        guard !flags.depthGiven else {
            throw .usage(
                "bench: -c (calls in flight in all, ghz's concurrency) and --depth (calls in flight per "
                    + "connection) say the same; give one")
        }
        guard concurrency >= connections else {
            throw .usage(
                "bench: -c \(concurrency) is fewer calls in flight than the \(connections) connections: "
                    + "give -c \(connections) or more (ghz too refuses more connections than concurrency)")
        }
        let depth = (concurrency + connections - 1) / connections
        guard depth <= 10_000 else {
            throw .usage(
                "bench: -c \(concurrency) over \(connections) connection(s) is more than 10000 in flight on each")
        }
        return depth
    }

    static func run(_ flags: Flags, arguments positionals: [String], options: ProbeOptions) throws(ProbeError)
        -> Int32
    {
        var configuration = flags.configuration
        configuration.depth = try depth(flags)
        let dataArgument = flags.data
        let variants = flags.variants
        let format = flags.format
        let durationGiven = flags.durationGiven
        guard positionals.count == 1, let name = positionals.first else {
            throw .usage("bench: expected one METHOD (see rpc-probe bench --help)")
        }
        guard options.maxTimeSeconds == nil else {
            throw .usage(
                "bench: --max-time bounds one command's calls; bench runs for --duration (or --total calls), "
                    + "and --timeout bounds each call")
        }
        guard !(durationGiven && configuration.total != nil) else {
            throw .usage("bench: give --duration or --total, not both")
        }
        guard !(flags.insecure && options.tls != nil) else {
            throw .usage(
                "bench: --insecure is ghz's plaintext, which contradicts the TLS flags (--tls, --cacert, --cert, "
                    + "--key, --servername); drop one side (grpcurl's -insecure is --tls-insecure-skip-verify)")
        }
        let template = try RequestTemplate(dataArgument.map(RequestData.read) ?? "{}")
        // Made before the load: a report that cannot be written should not cost a run.
        let output = try flags.output.map { (path: String) throws(ProbeError) in try ProbeOutput.File(creating: path) }
        if options.grpc {
            guard try options.grpcServer().tls == nil else {
                throw .usage(
                    "bench --grpc loads plaintext HTTP/2 (h2c) only; over TLS, drop --grpc: the same port serves our "
                        + "protocol, over TLS too")
            }
            configuration.transport = .grpc
        }
        configuration.client = try options.clientOptions()
        configuration.callOptions = options.callOptions()

        let session = ProbeSession(options: options)
        let method = try session.method(name)
        guard !method.serverStreaming else {
            throw .usage("bench: \(method.fullName) is a server-streaming method; bench calls unary methods")
        }
        // Fail before any load when the server cannot be reached (with --protoset nothing connected
        // yet), or is not the listener the flags speak to.
        if options.grpc { _ = try session.connectGRPC() } else { _ = try session.connect() }
        configuration.path = method.path
        let count = BenchRequests.count(variants: variants, template: template, configuration: configuration)
        let encoding = monotonicNow()
        let requests = try BenchRequests.make(template, count: count, method: method)
        configuration.bodies = requests.bodies
        if options.verbose {
            printError(
                "bench \(method.path)\(options.grpc ? " (gRPC)" : ""): \(configuration.connections) connection(s) × \(configuration.depth) in flight, "
                    + (configuration.total.map { "\($0) calls" }
                        ?? "\(BenchReport.fixed(configuration.durationSeconds, 3)) s")
                    + "; \(count) request(s) made in "
                    + "\(BenchReport.fixed(Double(monotonicNow() - encoding) / 1e9, 3)) s")
        }
        let report: LoadReport
        do throws(RPCError) {
            report = try LoadGenerator.run(configuration)
        } catch {
            // The load's own errors name --depth; say where it came from when -c set it.
            guard let concurrency = flags.concurrency, error.message.hasPrefix("--depth") else { throw .call(error) }
            var explained = error
            explained.message +=
                " (-c \(concurrency) over \(configuration.connections) connection(s) is --depth \(configuration.depth))"
            throw .call(explained)
        }
        let run = BenchRun(report: report, configuration: configuration, variesPerRequest: requests.variesPerRequest)
        let rendered: String
        switch format {
        case "json": rendered = BenchReport.json(run)
        case "csv": rendered = BenchReport.csv(run)
        case "html": rendered = BenchReport.html(run)
        default: rendered = BenchReport.text(run)
        }
        if let output {
            try output.write(Array((rendered + "\n").utf8))
        } else {
            ProbeOutput.standardOutput(rendered)
        }
        return BenchReport.failedCalls(report) == 0 && report.connectionErrors.isEmpty ? 0 : 1
    }
}
