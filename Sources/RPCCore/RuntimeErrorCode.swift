/// The `ERR_…` codes the RPC runtime itself puts in `Status.error_code`, each with the canonical
/// status it always travels with.
///
/// The raw values are the value names of `mrpc.v1.ErrorCode` (proto/mrpc/v1/envelope.proto),
/// which clients match on; `RuntimeErrorCodeTests` checks every case against the generated enum.
/// The status is stated once, in `status`'s exhaustive switch, and `RPCError(_:_:)` takes it from
/// there: no call site chooses one, so a code means the same status on every wire. Services add
/// codes of their own (`moderation.v1.ErrorCode`, whose `ErrorCode` carries its status the same
/// way). `resourceExhausted` is the one code the client library makes up locally and never reads
/// from the wire.
public enum RuntimeErrorCode: String, CaseIterable, Sendable {
    /// The API key is missing or wrong (HELLO, a gRPC request's key), or a connection without a
    /// key called a method that needs one.
    case unauthenticated = "ERR_UNAUTHENTICATED"
    /// A message or call header does not decode, or names its fields inconsistently.
    case invalidArgument = "ERR_INVALID_ARGUMENT"
    /// No method at the call's path, or an encoding or codec the server does not implement.
    case unimplemented = "ERR_UNIMPLEMENTED"
    /// The call's deadline passed, or its request did not arrive in time.
    case deadlineExceeded = "ERR_DEADLINE_EXCEEDED"
    /// A frame, header or body over its limit.
    case messageTooLarge = "ERR_MESSAGE_TOO_LARGE"
    /// More calls in flight than the connection allows.
    case tooManyCalls = "ERR_TOO_MANY_CALLS"
    /// A stream's reader did not keep up.
    case slowConsumer = "ERR_SLOW_CONSUMER"
    /// The client cancelled the call, or the connection went away under it.
    case cancelled = "ERR_CANCELLED"
    /// The server is shutting down, or the connection was idle.
    case unavailable = "ERR_UNAVAILABLE"
    /// The peer broke the wire protocol; the connection closes.
    case protocolViolation = "ERR_PROTOCOL"
    /// The server failed while handling the call.
    case internalError = "ERR_INTERNAL"
    /// The app is over its request rate; details carry `retry_after_ms`.
    case rateLimited = "ERR_RATE_LIMITED"
    /// A body marked compressed is not valid data of its encoding.
    case badEncoding = "ERR_BAD_ENCODING"
    /// The server's memory budget is spent, or the connection holds too much for calls not yet
    /// started; the work is refused, retry later.
    case overloaded = "ERR_OVERLOADED"
    /// The app, or the server, has its maximum of connections.
    case tooManyConnections = "ERR_TOO_MANY_CONNECTIONS"
    /// What a call names does not exist (a health check of an unknown service).
    case notFound = "ERR_NOT_FOUND"
    /// Client side only: the server does not read and the client's output buffer is full, so
    /// the call is refused before it is sent.
    case resourceExhausted = "ERR_RESOURCE_EXHAUSTED"

    /// The canonical status every error with this code carries.
    public var status: StatusCode {
        switch self {
        case .unauthenticated: .unauthenticated
        case .invalidArgument, .protocolViolation, .badEncoding: .invalidArgument
        case .unimplemented: .unimplemented
        case .deadlineExceeded: .deadlineExceeded
        case .messageTooLarge, .tooManyCalls, .slowConsumer, .rateLimited, .overloaded, .tooManyConnections,
            .resourceExhausted:
            .resourceExhausted
        case .cancelled: .cancelled
        case .unavailable: .unavailable
        case .internalError: .internal
        case .notFound: .notFound
        }
    }

    /// The wire name, e.g. `"ERR_OVERLOADED"`.
    public var name: String { rawValue }
}
