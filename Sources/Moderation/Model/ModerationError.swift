/// The error of a failed moderation call: a code for machines and a message for people.
///
/// The message names the uid or guid involved so that a log line or a client's alert is useful on
/// its own. Errors are values (`Equatable`) so tests can compare them and the idempotency store
/// can replay them.
public struct ModerationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What went wrong, for machines.
    public var code: ErrorCode
    /// What went wrong, for people; names the uid/guid involved.
    public var message: String
    /// Machine-readable extras, e.g. `retry_after_ms` when rate-limited.
    public var details: [String: String]

    public init(_ code: ErrorCode, _ message: String, details: [String: String] = [:]) {
        self.code = code
        self.message = message
        self.details = details
    }

    public var description: String { "\(code.name): \(message)" }
}
