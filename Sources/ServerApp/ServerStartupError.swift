/// Why the server could not start: the store would not open, the address would not bind.
///
/// A process-wide failure, reported on standard error with a non-zero exit status and never sent
/// to a peer; kept apart from the domain's per-call `ModerationError` (whose codes mean something
/// to a client) and from `ConfigurationError` (settings that are wrong before anything is tried).
public struct ServerStartupError: Error, CustomStringConvertible {
    /// What could not be done, naming the setting involved, and why: one line for the operator.
    public var message: String
    /// The error underneath: the store's `ModerationError`, the socket's `SystemError` (with its
    /// errno).
    public var cause: any Error

    public init(_ message: String, cause: any Error) {
        self.message = message
        self.cause = cause
    }

    public var description: String { message }
}
