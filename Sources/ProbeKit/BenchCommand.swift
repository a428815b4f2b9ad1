import ProtoSchema
import RPCCore
import RPCPosix

/// `rpc-probe HOST:PORT bench METHOD`: a ghz-class load test of one method.
enum BenchCommand {
    static let help = """
    usage: rpc-probe [flags] HOST:PORT bench METHOD [bench flags]

    Calls METHOD ("/pkg.Service/Method", "pkg.Service/Method" or "pkg.Service.Method") as fast as
    replies come back (or at --rps), and reports throughput, latency percentiles, a histogram and
    the distribution of status and error codes.

    bench flags:
      -d JSON | -d @FILE | -d @-   the request as JSON (default {}); "{{n}}" in it is replaced by
                                   0..N-1 over --variants requests, used round-robin
      --variants N                 how many distinct requests "{{n}}" makes (default 1)
      --conns N                    connections (default 1)
      --depth N                    calls in flight per connection (default 1)
      --duration D                 measured time, e.g. 10s (default 10s)
      --total N                    stop after N measured calls instead
      --warmup D                   load before measuring (default 0s)
      --rps R                      limit to R calls per second in all
      --threads N                  client threads (default 1)
      --format text|json|csv       output (default text)
    """

    static func run(_ reader: inout ArgumentReader, options: inout ProbeOptions) throws(ProbeError) -> Int32 {
        var configuration = LoadConfiguration()
        var method: String?
        var data = "{}"
        var variants = 1
        var format = "text"
        while !reader.isEmpty {
            if let (name, inline) = reader.flag() {
                if try options.accept(name, inline: inline, from: &reader) { continue }
                switch name {
                case "-d", "--data": data = try RequestData.read(try reader.value(for: name, inline: inline))
                case "--variants": variants = try reader.int(for: name, inline: inline, range: 1...1_000_000)
                case "--conns": configuration.connections = try reader.int(for: name, inline: inline, range: 1...10_000)
                case "--depth": configuration.depth = try reader.int(for: name, inline: inline, range: 1...10_000)
                case "--duration": configuration.durationSeconds = try reader.duration(for: name, inline: inline)
                case "--total": configuration.total = try reader.int(for: name, inline: inline, range: 1...Int(Int32.max))
                case "--warmup": configuration.warmupSeconds = try reader.duration(for: name, inline: inline)
                case "--rps": configuration.rate = try reader.double(for: name, inline: inline)
                case "--threads": configuration.threads = try reader.int(for: name, inline: inline, range: 1...256)
                case "--format":
                    format = try reader.value(for: name, inline: inline)
                    guard ["text", "json", "csv"].contains(format) else { throw .usage("--format: expected text, json or csv") }
                case "--help", "-h":
                    print(help)
                    return 0
                default: throw .usage("bench: unknown flag \(name)")
                }
            } else if let positional = reader.positional() {
                guard method == nil else { throw .usage("bench: unexpected argument '\(positional)'") }
                method = positional
            }
        }
        guard let method else { throw .usage("bench: missing METHOD\n\n" + help) }
        configuration.client = try options.clientOptions()
        configuration.callOptions = options.callOptions()

        let probe = try ClientConnection.probeConnect(configuration.client)
        let schema = try SchemaLoader.load(options) { probe }
        probe.close()
        let descriptor: MethodDescriptor
        do throws(ProtoSchemaError) {
            descriptor = try schema.requireMethod(named: method)
        } catch {
            throw .failure(error.message)
        }
        guard !descriptor.serverStreaming else { throw .usage("bench: \(descriptor.fullName) is a streaming method; bench calls unary methods") }
        configuration.path = descriptor.path
        configuration.bodies = try (0..<variants).map { (n: Int) throws(ProbeError) -> [UInt8] in
            let json = variants > 1 ? data.replacingAll("{{n}}", with: String(n)) : data
            do throws(ProtoSchemaError) {
                return try DynamicMessage(jsonString: json, as: descriptor.inputType).serializedBytes()
            } catch {
                throw .failure("-d: \(error.message)")
            }
        }
        let report: LoadReport
        do throws(RPCError) {
            report = try LoadGenerator.run(configuration)
        } catch {
            throw .call(error)
        }
        switch format {
        case "json": print(BenchReport.json(report, configuration: configuration))
        case "csv": print(BenchReport.csv(report))
        default: print(BenchReport.text(report, configuration: configuration))
        }
        return report.outcomes.keys.allSatisfy({ $0 == "OK" }) && report.connectionErrors.isEmpty ? 0 : 1
    }
}

extension ClientConnection {
    /// Connects for rpc-probe, turning a failure into the probe's error.
    static func probeConnect(_ options: ClientOptions) throws(ProbeError) -> ClientConnection {
        do {
            return try ClientConnection.connect(options)
        } catch {
            throw .call(error)
        }
    }
}

extension String {
    func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var result = ""
        var rest = self[...]
        while let range = rest.range(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}

extension Substring {
    func range(of target: String) -> Range<Substring.Index>? {
        var index = startIndex
        while index < endIndex {
            if self[index...].hasPrefix(target) {
                return index..<self.index(index, offsetBy: target.count)
            }
            index = self.index(after: index)
        }
        return nil
    }
}
