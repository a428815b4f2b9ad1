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
    /// The errors the runtime itself sends (their codes are `mrpc.v1.ErrorCode` names).
    public static func invalidArgument(_ message: String) -> RPCError {
        RPCError(code: .invalidArgument, errorCode: RuntimeErrorCode.invalidArgument, message: message)
    }

    public static func unimplemented(method: String) -> RPCError {
        RPCError(
            code: .unimplemented, errorCode: RuntimeErrorCode.unimplemented,
            message: "no method \(method) on this server")
    }

    public static func deadlineExceeded(_ message: String) -> RPCError {
        RPCError(code: .deadlineExceeded, errorCode: RuntimeErrorCode.deadlineExceeded, message: message)
    }

    public static func messageTooLarge(_ message: String) -> RPCError {
        RPCError(code: .resourceExhausted, errorCode: RuntimeErrorCode.messageTooLarge, message: message)
    }

    public static func tooManyCalls(limit: Int) -> RPCError {
        RPCError(
            code: .resourceExhausted, errorCode: RuntimeErrorCode.tooManyCalls,
            message: "the connection already has \(limit) calls in flight (the limit in HELLO_ACK)")
    }

    public static func cancelled(_ message: String) -> RPCError {
        RPCError(code: .cancelled, errorCode: RuntimeErrorCode.cancelled, message: message)
    }

    public static func unavailable(_ message: String, details: [String: String] = [:]) -> RPCError {
        RPCError(code: .unavailable, errorCode: RuntimeErrorCode.unavailable, message: message, details: details)
    }

    public static func unauthenticated(_ message: String) -> RPCError {
        RPCError(code: .unauthenticated, errorCode: RuntimeErrorCode.unauthenticated, message: message)
    }

    public static func protocolViolation(_ message: String) -> RPCError {
        RPCError(code: .invalidArgument, errorCode: RuntimeErrorCode.protocolViolation, message: message)
    }

    public static func badEncoding(_ message: String) -> RPCError {
        RPCError(code: .invalidArgument, errorCode: RuntimeErrorCode.badEncoding, message: message)
    }

    public static func `internal`(_ message: String) -> RPCError {
        RPCError(code: .internal, errorCode: RuntimeErrorCode.internalError, message: message)
    }
}
