import CommandLineSupport

/// One flag rpc-probe reads: its names, whether it takes a value, and what it does to the values
/// it sets (`ProbeOptions` for the shared flags, a verb's own `Flags`).
///
/// Flags are data rather than code in each verb so that the whole command line can be read
/// before the verb is known: grpcurl's habit puts a verb's flags first
/// (`rpc-probe -d '{…}' HOST METHOD`), and only a flag's entry says whether the argument after it
/// is its value or a positional.
struct ProbeFlag<Values>: Sendable {
    /// What the flag does.
    enum Action: Sendable {
        /// Takes a value (`-d JSON`, `--timeout=2s`): the next argument, or the inline one.
        case value(@Sendable (inout Values, ArgumentValue) throws(ArgumentError) -> Void)
        /// A switch: on when given bare; `=off` (`=false`) turns it off.
        case toggle(@Sendable (inout Values, Bool) throws(ArgumentError) -> Void)
    }

    /// Every name of the flag, dashes included, in their `--` form for long names (the `.go`
    /// reading turns `-name` into `--name`).
    let names: [String]
    let action: Action

    init(
        _ names: String..., value apply: @escaping @Sendable (inout Values, ArgumentValue) throws(ArgumentError) -> Void
    ) {
        self.names = names
        action = .value(apply)
    }

    init(_ names: String..., toggle apply: @escaping @Sendable (inout Values, Bool) throws(ArgumentError) -> Void) {
        self.names = names
        action = .toggle(apply)
    }

    var takesValue: Bool {
        if case .value = action { return true }
        return false
    }

    /// Applies the flag as given; `value` is its value when it takes one.
    func apply(_ given: GivenFlag, to values: inout Values) throws(ArgumentError) {
        switch action {
        case .value(let apply):
            guard let value = given.value else { throw ArgumentError("\(given.flag.spelled) needs a value") }
            try apply(&values, value)
        case .toggle(let apply):
            try apply(&values, try given.flag.booleanValue())
        }
    }
}

/// A flag as it appeared on the command line, with its value when its entry takes one.
struct GivenFlag {
    var flag: ArgumentReader.Flag
    var value: ArgumentValue?
}

extension Array {
    /// The flag of this table named `name`, if any.
    func flag<Values>(named name: String) -> ProbeFlag<Values>? where Element == ProbeFlag<Values> {
        first { $0.names.contains(name) }
    }
}
