import CommandLineSupport

/// rpc-probe: poke, script and load an MRPC server (grpcurl and ghz in one tool).
public enum RPCProbe {
    static let help = """
        usage: rpc-probe [flags] HOST:PORT VERB [arguments]
               rpc-probe [flags] HOST:PORT pkg.Service/Method     (grpcurl's form: call)
               rpc-probe [flags] --protoset FILE list|describe [arguments]

        verbs (each has --help; rpc-probe help VERB prints it too):
          list [SERVICE]    services, or a service's methods (from reflection or --protoset)
          describe [SYMBOL] a service, method, message or enum as .proto text
          call METHOD       call a method with a JSON request (-d); print the JSON response
          watch             follow the event stream, one JSON object a line
          bench METHOD      load-test a unary method (ghz-style report: text, json, csv, html)
          health [SERVICE]  the server's serving status
          protoset          save the server's schema as a FileDescriptorSet for --protoset

        \(ProbeOptions.help)

        exit codes: 0 OK; 1 the probe failed without a status (bad JSON, unknown method, unreadable
        file; bench: some calls failed); 2 usage error; 64 + the status code when a call failed
        (e.g. 69 NOT_FOUND, 78 UNAVAILABLE: server unreachable, 80 UNAUTHENTICATED: bad API key).
        """

    /// Every verb.
    static var verbs: [any ProbeVerb.Type] {
        [
            ListCommand.self, DescribeCommand.self, CallCommand.self, WatchCommand.self, BenchCommand.self,
            HealthCommand.self, ProtosetCommand.self,
        ]
    }

    /// Whether the flag named so takes a value, by the shared table and every verb's; nil when no
    /// table has it.
    static func takesValue(_ name: String) -> Bool? {
        if let shared = ProbeOptions.flags.flag(named: name) { return shared.takesValue }
        for verb in verbs {
            if let valued = verb.takesValue(name) { return valued }
        }
        return nil
    }

    /// The variable every client tool reads its API key from (`APP_ID:KEY`, or a bare key),
    /// and the older names still read when it is unset, in order.
    public static let apiKeyVariable = "MODERATION_CLIENT_API_KEY"
    public static let apiKeyAliases = ["RPC_PROBE_API_KEY", "MRPC_API_KEY"]

    /// The API key the environment gives: `apiKeyVariable`, else the first alias set.
    static func apiKey(_ environment: [String: String]) -> String {
        for name in [apiKeyVariable] + apiKeyAliases {
            if let key = environment[name], !key.isEmpty { return key }
        }
        return ""
    }

    /// Runs rpc-probe; returns the exit code.
    /// - Parameters:
    ///   - arguments: the command line without the program name.
    ///   - environment: the process environment (`MODERATION_CLIENT_API_KEY`).
    public static func main(arguments: [String], environment: [String: String]) -> Int32 {
        var options = ProbeOptions()
        options.apiKey = apiKey(environment)
        options.schemaCache = SchemaCache(environment: environment)
        do throws(ProbeError) {
            let line: ProbeCommandLine
            do throws(ProbeError) {
                line = try ProbeCommandLine.read(
                    arguments, verbs: Set(verbs.map { $0.name }), takesValue: takesValue,
                    knownFlags: ProbeOptions.flags.flatMap(\.names) + verbs.flatMap { $0.flagNames })
            } catch .usage(let text) where text.hasPrefix("missing ") {
                throw .usage(text + "\n\n" + help)
            }
            options.address = line.address
            if line.verb == "help" {
                guard let topic = line.arguments.first else {
                    ProbeOutput.standardOutput(help)
                    return 0
                }
                guard let verb = verbs.first(where: { $0.name == topic }) else {
                    throw .usage("help: no verb '\(topic)' (see rpc-probe --help)")
                }
                ProbeOutput.standardOutput(verb.help + "\n\n" + ProbeOptions.help)
                return 0
            }
            guard let verb = verbs.first(where: { $0.name == line.verb }) else {
                throw .usage("unknown verb '\(line.verb)' (see rpc-probe --help)")
            }
            if line.wantsHelp {
                ProbeOutput.standardOutput(verb.help + "\n\n" + ProbeOptions.help)
                return 0
            }
            return try execute(verb, line, options: &options)
        } catch {
            printError(error.message)
            return error.exitCode
        }
    }

    /// Applies the flags of `line` (the shared ones to `options`, the verb's to its values) in
    /// order, and runs the verb.
    private static func execute<Verb: ProbeVerb>(
        _ verb: Verb.Type, _ line: ProbeCommandLine, options: inout ProbeOptions
    ) throws(ProbeError) -> Int32 {
        var values = Verb.defaults
        for given in line.givenFlags {
            do throws(ArgumentError) {
                if let shared = ProbeOptions.flags.flag(named: given.flag.name) {
                    try shared.apply(given, to: &options)
                } else if let own = Verb.flags.flag(named: given.flag.name) {
                    try own.apply(given, to: &values)
                } else if case let advice = GRPCurlHabits.advice(for: given.flag.name), !advice.isEmpty {
                    // Another verb's flag under a grpcurl name (bench's ghz --insecure): the grpcurl
                    // habit is the likelier slip here.
                    throw ArgumentError(
                        "\(Verb.name): unknown flag \(given.flag.spelled)\(advice) (see rpc-probe \(Verb.name) --help)")
                } else {
                    let owners = verbs.filter { $0.takesValue(given.flag.name) != nil }.map { $0.name }
                    throw ArgumentError(
                        "\(Verb.name): \(given.flag.spelled) is a flag of \(owners.joined(separator: " and ")), "
                            + "not of \(Verb.name) (see rpc-probe \(Verb.name) --help)")
                }
            } catch {
                throw .usage(error.message)
            }
        }
        try options.validate()
        return try Verb.run(values, arguments: line.arguments, options: options)
    }
}

extension ProbeVerb {
    /// Whether this verb's flag named so takes a value; nil when it has no such flag.
    static func takesValue(_ name: String) -> Bool? { flags.flag(named: name)?.takesValue }

    /// Every name of this verb's flags.
    static var flagNames: [String] { flags.flatMap(\.names) }
}
