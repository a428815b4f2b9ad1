import CommandLineSupport

/// Verb-level flag reading shared by the verbs: shared flags first, then the verb's own.
extension ArgumentReader {
    /// Reads the rest of the command line: shared flags into `options`, the verb's flags through
    /// `flag` (which returns false for a flag it does not know), positionals into the result.
    /// - Returns: the positionals, or nil when `--help` was asked for (and printed).
    /// - Throws: a usage error for an unknown flag or a value that cannot be used.
    mutating func readVerb(
        _ verb: String, options: inout ProbeOptions, help: String,
        flag: (Flag, inout ArgumentReader) throws(ArgumentError) -> Bool = { _, _ in false }
    ) throws(ProbeError) -> [String]? {
        var positionals: [String] = []
        do throws(ArgumentError) {
            while let token = next() {
                switch token {
                case .positional(let text):
                    positionals.append(text)
                case .flag(let given) where given.name == "--help" || given.name == "-h":
                    ProbeOutput.standardOutput(help + "\n\n" + ProbeOptions.help)
                    return nil
                case .flag(let given):
                    if try options.accept(given, from: &self) { continue }
                    guard try flag(given, &self) else {
                        throw ArgumentError("\(verb): unknown flag \(given.name) (see rpc-probe \(verb) --help)")
                    }
                }
            }
        } catch {
            throw .usage(error.message)
        }
        return positionals
    }
}
