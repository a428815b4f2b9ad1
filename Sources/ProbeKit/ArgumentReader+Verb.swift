/// Verb-level flag reading shared by the verbs: shared flags first, then the verb's own.
extension ArgumentReader {
    /// Reads the rest of the command line: shared flags into `options`, the verb's flags through
    /// `flag` (which returns false for a flag it does not know), positionals into the result.
    /// - Returns: the positionals, or nil when `--help` was asked for (and printed).
    mutating func readVerb(
        _ verb: String, options: inout ProbeOptions, help: String,
        flag: (String, String?, inout ArgumentReader) throws(ProbeError) -> Bool = { _, _, _ in false }
    ) throws(ProbeError) -> [String]? {
        var positionals: [String] = []
        while !isEmpty {
            if let (name, inline) = self.flag() {
                if name == "--help" || name == "-h" {
                    ProbeOutput.standardOutput(help + "\n\n" + ProbeOptions.help)
                    return nil
                }
                if try options.accept(name, inline: inline, from: &self) { continue }
                guard try flag(name, inline, &self) else { throw .usage("\(verb): unknown flag \(name) (see rpc-probe \(verb) --help)") }
            } else if let positional = positional() {
                positionals.append(positional)
            }
        }
        return positionals
    }
}
