/// Walks a command line one token at a time: flags (`--flag value`, `--flag=value`, switches
/// without a value) and positional arguments.
///
/// The reader knows no flag by name; the tool decides what each flag means and whether it takes
/// a value (`value(for:)`) or not (`Flag.booleanValue()`). There is no bundling of single-letter
/// flags. In the `.gnu` style (the server's) a name is kept as given and only a `--` name
/// carries an inline `=value`. In the `.go` style (rpc-probe's, for grpcurl's habits) a
/// single-dash name longer than one letter is read as its `--` form (`-plaintext` is
/// `--plaintext`, as Go's flag package takes both), and any flag may carry `=value`.
public struct ArgumentReader {
    /// How flags are spelled.
    public enum Style: Sendable {
        /// `--name` for long flags, `-x` for one letter; `=value` only after `--name`.
        case gnu
        /// As `.gnu`, and also `-name` for `--name` and `-x=value`, as Go's flag package reads them.
        case go
    }

    /// A flag as given on the command line.
    public struct Flag: Equatable, Sendable {
        /// The name, dashes included: "--timeout", "-H" (in the `.go` style, "-timeout" too is
        /// "--timeout").
        public var name: String
        /// The value given as `--name=value`, if any.
        public var inlineValue: String?
        /// The argument exactly as given, for messages about an unknown flag.
        public var argument: String

        /// Splits `argument`, which starts with "-", into its name and inline value.
        public init(_ argument: String, style: Style = .gnu) {
            self.argument = argument
            let splits = argument.hasPrefix("--") || style == .go
            if splits, let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            } else {
                name = argument
                inlineValue = nil
            }
            if style == .go && !name.hasPrefix("--") && name.count > 2 { name = "-" + name }
        }

        /// The name as typed, without any inline value ("-plaintext" for `-plaintext=true`), for
        /// messages about this flag.
        public var spelled: String {
            guard let inlineValue else { return argument }
            return String(argument.dropLast(inlineValue.count + 1))
        }

        /// A switch: true when given bare, or its inline value read as on or off (`--compress=off`,
        /// `-emit-defaults=true`).
        public func booleanValue() throws(ArgumentError) -> Bool {
            guard let inlineValue else { return true }
            return try ArgumentValue(inlineValue, name: spelled).boolean()
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
    public let style: Style

    /// - Parameters:
    ///   - arguments: the command line without the program name.
    ///   - style: how flags are spelled.
    public init(_ arguments: [String], style: Style = .gnu) {
        remaining = arguments[...]
        self.style = style
    }

    public var isEmpty: Bool { remaining.isEmpty }

    /// The next argument: a flag when it starts with "-" (a lone "-" is positional: standard
    /// input by convention), otherwise a positional argument; nil at the end.
    public mutating func next() -> Token? {
        guard let first = remaining.popFirst() else { return nil }
        return Self.isFlag(first) ? .flag(Flag(first, style: style)) : .positional(first)
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
        if let inline = flag.inlineValue { return ArgumentValue(inline, name: flag.spelled) }
        guard let next = remaining.popFirst() else {
            throw ArgumentError(
                "\(flag.spelled) needs a value" + (placeholder.map { ": \(flag.spelled) \($0)" } ?? ""))
        }
        return ArgumentValue(next, name: flag.spelled)
    }

    private static func isFlag(_ argument: String) -> Bool {
        argument.hasPrefix("-") && argument != "-"
    }
}
