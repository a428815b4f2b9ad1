/// A command-line argument, environment variable or setting that could not be used.
///
/// The message names what was wrong and what was expected ("--threads: 'zero' is not a whole
/// number in 1...256"); each tool wraps it in its own error (a usage error, a configuration
/// error) and adds where the text came from.
public struct ArgumentError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
