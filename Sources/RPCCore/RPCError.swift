public import RPCMessages

/// A call's failure as the peer sees it: canonical status code, machine-readable `ERR_…` code,
/// a message naming what was wrong, and key/value details.
///
/// Per-call errors travel to the peer in `Status`; process-wide failures (bad configuration, a
/// port in use) are other error types and never reach the wire.
public struct RPCError: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: StatusCode
    public var errorCode: String
    public var message: String
    public var details: [String: String]
    /// The error this one reports (a domain error, a decoding or inflate failure), as
    /// grpc-swift-2's `RPCError.cause`: for logs and tests on this side; it never travels, and
    /// equality ignores it.
    public var cause: (any Error)?

    public init(
        code: StatusCode, errorCode: String, message: String, details: [String: String] = [:], cause: (any Error)? = nil
    ) {
        self.code = code
        self.errorCode = errorCode
        self.message = message
        self.details = details
        self.cause = cause
    }

    /// The error carried by a non-OK `Status`.
    public init(status: Status) {
        self.init(
            code: StatusCode(rawValue: status.code), errorCode: status.errorCode,
            message: status.message, details: status.details)
    }

    /// The `Status` that carries this error.
    public var status: Status {
        Status(code: code.rawValue, errorCode: errorCode, message: message, details: details)
    }

    /// This error with `cause` as the error it reports.
    public func caused(by cause: any Error) -> RPCError {
        var error = self
        error.cause = cause
        return error
    }

    /// Equal when what the peer sees is equal; `cause` stays on this side.
    public static func == (lhs: RPCError, rhs: RPCError) -> Bool {
        lhs.code == rhs.code && lhs.errorCode == rhs.errorCode && lhs.message == rhs.message
            && lhs.details == rhs.details
    }

    public var description: String {
        var text = "\(code.name)"
        if !errorCode.isEmpty { text += " \(errorCode)" }
        if !message.isEmpty { text += ": \(message)" }
        if !details.isEmpty {
            text += " [" + details.keys.sorted().map { "\($0)=\(details[$0]!)" }.joined(separator: ", ") + "]"
        }
        return text
    }
}

extension RPCError {
    /// An error of the runtime's own: its status is the one `code` carries.
    public init(_ code: RuntimeErrorCode, _ message: String, details: [String: String] = [:]) {
        self.init(code: code.status, errorCode: code.name, message: message, details: details)
    }

    /// The runtime's code of this error, nil for a service's own code (or none).
    public var runtimeCode: RuntimeErrorCode? { RuntimeErrorCode(rawValue: errorCode) }

    /// The errors the runtime sends most, named.
    public static func invalidArgument(_ message: String) -> RPCError { RPCError(.invalidArgument, message) }

    public static func unimplemented(method: String) -> RPCError {
        RPCError(.unimplemented, "no method \(method) on this server")
    }

    public static func deadlineExceeded(_ message: String) -> RPCError { RPCError(.deadlineExceeded, message) }

    public static func messageTooLarge(_ message: String, details: [String: String] = [:]) -> RPCError {
        RPCError(.messageTooLarge, message, details: details)
    }

    public static func tooManyCalls(limit: Int) -> RPCError {
        RPCError(.tooManyCalls, "the connection already has \(limit) calls in flight (the limit in HELLO_ACK)")
    }

    public static func cancelled(_ message: String) -> RPCError { RPCError(.cancelled, message) }

    public static func unavailable(_ message: String, details: [String: String] = [:]) -> RPCError {
        RPCError(.unavailable, message, details: details)
    }

    public static func unauthenticated(_ message: String) -> RPCError { RPCError(.unauthenticated, message) }

    public static func protocolViolation(_ message: String) -> RPCError { RPCError(.protocolViolation, message) }

    public static func badEncoding(_ message: String) -> RPCError { RPCError(.badEncoding, message) }

    public static func overloaded(_ message: String) -> RPCError { RPCError(.overloaded, message) }

    public static func `internal`(_ message: String) -> RPCError { RPCError(.internalError, message) }
}
