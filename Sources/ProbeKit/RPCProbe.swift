import RPCPosix
internal import Glibc

/// rpc-probe: poke, script and load an MRPC server (grpcurl and ghz in one tool).
public enum RPCProbe {
    static let help = """
    usage: rpc-probe [flags] HOST:PORT VERB [arguments]

    verbs (each has --help):
      list [SERVICE]    services, or a service's methods (from reflection or --protoset)
      describe SYMBOL   a service, method, message or enum as .proto text
      call METHOD       call a method with a JSON request; print the JSON response
      watch             follow the event stream, one JSON object a line
      bench METHOD      load-test a unary method (ghz-style report)
      health [SERVICE]  the server's serving status

    \(ProbeOptions.help)
    Exit codes: 0 OK; 64 + status code when a call fails; 2 for usage errors; 1 otherwise.
    """

    static let verbs: Set<String> = ["list", "describe", "call", "watch", "bench", "health"]

    /// Runs rpc-probe; returns the exit code.
    public static func main(arguments: [String], environment: [String: String]) -> Int32 {
        var reader = ArgumentReader(arguments)
        var options = ProbeOptions()
        options.apiKey = environment["RPC_PROBE_API_KEY"] ?? ""
        do throws(ProbeError) {
            var verb: String?
            while verb == nil {
                if let (name, inline) = reader.flag() {
                    if name == "--help" || name == "-h" {
                        print(help)
                        return 0
                    }
                    guard try options.accept(name, inline: inline, from: &reader) else { throw ProbeError.usage("unknown flag \(name)") }
                } else if let positional = reader.positional() {
                    if options.address == nil && !verbs.contains(positional) {
                        options.address = positional
                    } else {
                        verb = positional
                    }
                } else {
                    throw ProbeError.usage(options.address == nil ? "missing HOST:PORT\n\n\(help)" : "missing VERB\n\n\(help)")
                }
            }
            switch verb! {
            case "list": return try ListCommand.run(&reader, options: &options)
            case "describe": return try DescribeCommand.run(&reader, options: &options)
            case "call": return try CallCommand.run(&reader, options: &options)
            case "watch": return try WatchCommand.run(&reader, options: &options)
            case "bench": return try BenchCommand.run(&reader, options: &options)
            case "health": return try HealthCommand.run(&reader, options: &options)
            default: throw ProbeError.usage("unknown verb '\(verb!)'\n\n\(help)")
            }
        } catch {
            var line = "rpc-probe: " + error.message + "\n"
            line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
            return error.exitCode
        }
    }
}
