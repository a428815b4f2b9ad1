/// Walks a command line one token at a time: flags (`--flag value`, `--flag=value`, switches
/// without a value) and positional arguments.
///
/// The reader knows no flag by name; the tool decides what each flag means and whether it takes
/// a value (`value(for:)`) or not (`Flag.booleanValue()`). Names are kept whole, dashes
/// included, so a single-dash long name (grpcurl's `-plaintext`) is a name like any other; there
/// is no bundling of single-letter flags. Only a `--` name carries an inline `=value`.
public struct ArgumentReader {
    /// A flag as given on the command line.
    public struct Flag: Equatable, Sendable {
        /// The name, dashes included: "--timeout", "-H".
        public var name: String
        /// The value given as `--name=value`, if any.
        public var inlineValue: String?
        /// The argument exactly as given, for messages about an unknown flag.
        public var argument: String

        /// Splits `argument`, which starts with "-", into its name and inline value.
        public init(_ argument: String) {
            self.argument = argument
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            } else {
                name = argument
                inlineValue = nil
            }
        }

        /// A switch: true when given bare, or its inline value read as on or off (`--compress=off`).
        public func booleanValue() throws(ArgumentError) -> Bool {
            guard let inlineValue else { return true }
            return try ArgumentValue(inlineValue, name: name).onOff()
        }
    }

    /// One step of the command line.
    public enum Token: Equatable, Sendable {
        case flag(Flag)
        case positional(String)

        /// The argument exactly as given, for messages about one that is not expected.
        public var argument: String {
            switch self {
            case .flag(let flag): flag.argument
            case .positional(let text): text
            }
        }
    }

    private var remaining: ArraySlice<String>

    /// - Parameter arguments: the command line without the program name.
    public init(_ arguments: [String]) { remaining = arguments[...] }

    public var isEmpty: Bool { remaining.isEmpty }

    /// The next argument: a flag when it starts with "-" (a lone "-" is positional: standard
    /// input by convention), otherwise a positional argument; nil at the end.
    public mutating func next() -> Token? {
        guard let first = remaining.popFirst() else { return nil }
        return Self.isFlag(first) ? .flag(Flag(first)) : .positional(first)
    }

    /// The next argument if it is positional; nil (and nothing consumed) otherwise.
    public mutating func positional() -> String? {
        guard let first = remaining.first, !Self.isFlag(first) else { return nil }
        return remaining.removeFirst()
    }

    /// The value of `flag`: its inline value, or else the next argument whatever it looks like
    /// (so `--threads -1` reaches the range check rather than being read as a flag).
    /// - Parameter placeholder: what the value looks like ("N", "HOST:PORT"), for the message
    ///   when it is missing.
    /// - Throws: when the command line ends before the value.
    public mutating func value(for flag: Flag, placeholder: String? = nil) throws(ArgumentError) -> ArgumentValue {
        if let inline = flag.inlineValue { return ArgumentValue(inline, name: flag.name) }
        guard let next = remaining.popFirst() else {
            throw ArgumentError("\(flag.name) needs a value" + (placeholder.map { ": \(flag.name) \($0)" } ?? ""))
        }
        return ArgumentValue(next, name: flag.name)
    }

    private static func isFlag(_ argument: String) -> Bool {
        argument.hasPrefix("-") && argument != "-"
    }
}
