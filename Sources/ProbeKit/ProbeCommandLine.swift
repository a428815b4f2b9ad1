import CommandLineSupport
import NameSuggestion

/// rpc-probe's command line read whole, before anything runs: the server's address, the verb,
/// its positional arguments, and every flag with its value, in order.
///
/// The grammar is grpcurl's wherever it does not clash with ours: flags anywhere (before the
/// address, between it and the verb, after the verb), single-dash long names (`-plaintext`,
/// `-max-time=5`), and a method right after the address, without a verb, meaning `call`
/// (`rpc-probe -d '{…}' HOST:PORT pkg.Service/Method`).
struct ProbeCommandLine: Equatable {
    var address: String?
    /// "list", "describe", "call", …, or "help".
    var verb: String
    var arguments: [String]
    var flags: [ArgumentReader.Flag]
    /// The value of each flag in `flags` that takes one, by position.
    var values: [Int: String]
    /// `--help` or `-h` was given somewhere.
    var wantsHelp: Bool

    /// The flags with their values, as the tables apply them.
    var givenFlags: [GivenFlag] {
        flags.enumerated().map { index, flag in
            GivenFlag(flag: flag, value: values[index].map { ArgumentValue($0, name: flag.spelled) })
        }
    }

    /// Reads `arguments`.
    /// - Parameters:
    ///   - verbs: the verbs' names (`help` aside).
    ///   - takesValue: whether the flag named so takes a value; nil for a flag no table has.
    ///   - knownFlags: every flag's names, to suggest the closest to an unknown one.
    /// - Throws: a usage error: a flag no verb has, a missing value, no verb, an unknown verb.
    static func read(
        _ arguments: [String], verbs: Set<String>, takesValue: (String) -> Bool?, knownFlags: [String] = []
    ) throws(ProbeError) -> ProbeCommandLine {
        var reader = ArgumentReader(arguments, style: .go)
        var positionals: [String] = []
        var flags: [ArgumentReader.Flag] = []
        var values: [Int: String] = [:]
        var wantsHelp = false
        // A flag no table has: reported once the verb is known (its help is the one to see); until
        // then it is taken for a switch.
        var unknown: ArgumentReader.Flag?
        while let token = reader.next() {
            switch token {
            case .positional(let text):
                positionals.append(text)
            case .flag(let flag) where flag.name == "--help" || flag.name == "-h":
                wantsHelp = true
            case .flag(let flag):
                guard let valued = takesValue(flag.name) else {
                    unknown = unknown ?? flag
                    continue
                }
                if valued {
                    do throws(ArgumentError) {
                        values[flags.count] = try reader.value(for: flag).text
                    } catch {
                        throw .usage(error.message)
                    }
                }
                flags.append(flag)
            }
        }
        var line = ProbeCommandLine(
            address: nil, verb: "help", arguments: [], flags: flags, values: values, wantsHelp: wantsHelp)
        var unresolved: ProbeError?
        do throws(ProbeError) {
            try line.resolve(positionals, verbs: verbs)
        } catch {
            unresolved = error
        }
        if let unknown, !wantsHelp {
            let verb = unresolved == nil && line.verb != "help" ? line.verb : nil
            var advice = GRPCurlHabits.advice(for: unknown.name)
            if advice.isEmpty, let closest = Suggestion.offers(for: unknown.name, among: knownFlags).first {
                advice = " (did you mean \(closest)?)"
            }
            throw .usage(
                (verb.map { "\($0): " } ?? "") + "unknown flag \(unknown.spelled)" + advice
                    + " (see rpc-probe \(verb.map { "\($0) " } ?? "")--help)")
        }
        if let unresolved { throw unresolved }
        return line
    }

    /// Finds the address, the verb and its arguments among the positionals.
    private mutating func resolve(_ positionals: [String], verbs: Set<String>) throws(ProbeError) {
        guard let first = positionals.first else {
            if wantsHelp { return }
            throw .usage("missing HOST:PORT and VERB")
        }
        if verbs.contains(first) || first == "help" {
            (verb, arguments) = (first, Array(positionals.dropFirst()))
            return
        }
        address = first
        guard positionals.count > 1 else {
            if wantsHelp { return }
            throw .usage("missing VERB after \(first) (or a METHOD to call: rpc-probe \(first) pkg.Service/Method)")
        }
        let second = positionals[1]
        if verbs.contains(second) {
            (verb, arguments) = (second, Array(positionals.dropFirst(2)))
        } else if second.contains("/") || second.contains(".") {
            // grpcurl's form: a method after the address is a call.
            (verb, arguments) = ("call", Array(positionals.dropFirst()))
        } else {
            throw .usage(
                "unknown verb '\(second)' (verbs: \(verbs.sorted().joined(separator: ", ")); "
                    + "or a method to call, pkg.Service/Method)")
        }
    }
}
