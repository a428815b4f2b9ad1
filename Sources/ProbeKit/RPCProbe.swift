import CommandLineSupport

/// rpc-probe: poke, script and load an MRPC server (grpcurl and ghz in one tool).
public enum RPCProbe {
    static let help = """
        usage: rpc-probe [flags] HOST:PORT VERB [arguments]
               rpc-probe [flags] --protoset FILE list|describe [arguments]

        verbs (each has --help; rpc-probe help VERB prints it too):
          list [SERVICE]    services, or a service's methods (from reflection or --protoset)
          describe [SYMBOL] a service, method, message or enum as .proto text
          call METHOD       call a method with a JSON request (-d); print the JSON response
          watch             follow the event stream, one JSON object a line
          bench METHOD      load-test a unary method (ghz-style report: text, json or csv)
          health [SERVICE]  the server's serving status
          protoset          save the server's schema as a FileDescriptorSet for --protoset

        \(ProbeOptions.help)

        exit codes: 0 OK; 1 the probe failed without a status (bad JSON, unknown method, unreadable
        file; bench: some calls failed); 2 usage error; 64 + the status code when a call failed
        (e.g. 69 NOT_FOUND, 78 UNAVAILABLE: server unreachable, 80 UNAUTHENTICATED: bad API key).
        """

    /// Each verb's runner and help.
    private static var verbs:
        [String: (run: (inout ArgumentReader, inout ProbeOptions) throws(ProbeError) -> Int32, help: String)]
    {
        [
            "list": (ListCommand.run, ListCommand.help),
            "describe": (DescribeCommand.run, DescribeCommand.help),
            "call": (CallCommand.run, CallCommand.help),
            "watch": (WatchCommand.run, WatchCommand.help),
            "bench": (BenchCommand.run, BenchCommand.help),
            "health": (HealthCommand.run, HealthCommand.help),
            "protoset": (ProtosetCommand.run, ProtosetCommand.help),
        ]
    }

    /// Runs rpc-probe; returns the exit code.
    /// - Parameters:
    ///   - arguments: the command line without the program name.
    ///   - environment: the process environment (`RPC_PROBE_API_KEY`).
    public static func main(arguments: [String], environment: [String: String]) -> Int32 {
        var reader = ArgumentReader(arguments)
        var options = ProbeOptions()
        options.apiKey = environment["RPC_PROBE_API_KEY"] ?? ""
        do throws(ProbeError) {
            var verb: String?
            while verb == nil {
                switch reader.next() {
                case .flag(let flag) where flag.name == "--help" || flag.name == "-h":
                    ProbeOutput.standardOutput(help)
                    return 0
                case .flag(let flag):
                    let accepted: Bool
                    do throws(ArgumentError) {
                        accepted = try options.accept(flag, from: &reader)
                    } catch {
                        throw .usage(error.message)
                    }
                    guard accepted else { throw .usage("unknown flag \(flag.name) (see rpc-probe --help)") }
                case .positional(let positional):
                    if options.address == nil && verbs[positional] == nil && positional != "help" {
                        options.address = positional
                    } else {
                        verb = positional
                    }
                case nil:
                    throw .usage(
                        options.address == nil ? "missing HOST:PORT and VERB\n\n\(help)" : "missing VERB\n\n\(help)")
                }
            }
            if verb == "help" {
                let topic = reader.positional()
                guard let topic else {
                    ProbeOutput.standardOutput(help)
                    return 0
                }
                guard let entry = verbs[topic] else { throw .usage("help: no verb '\(topic)' (see rpc-probe --help)") }
                ProbeOutput.standardOutput(entry.help + "\n\n" + ProbeOptions.help)
                return 0
            }
            guard let entry = verbs[verb!] else {
                throw .usage(
                    "unknown verb '\(verb!)' (verbs: \(verbs.keys.sorted().joined(separator: ", ")); see rpc-probe --help)"
                )
            }
            return try entry.run(&reader, &options)
        } catch {
            printError(error.message)
            return error.exitCode
        }
    }
}
