/// The text given for a flag, setting or positional argument, with the name its errors start
/// with; the typed readers (`integer(in:)`, `duration()`, `hostPort(…)`, `onOff()`,
/// `choice(…)`) turn it into a value or an `ArgumentError` that says what was expected.
public struct ArgumentValue: Equatable, Sendable {
    /// The flag or setting the text was given for ("--threads"); nil for a positional argument.
    public var name: String?
    public var text: String

    public init(_ text: String, name: String?) {
        self.text = text
        self.name = name
    }

    /// An error about this value: `problem` after the name ("--rps: must be more than 0").
    public func error(_ problem: String) -> ArgumentError {
        ArgumentError(name.map { "\($0): \(problem)" } ?? problem)
    }
}
