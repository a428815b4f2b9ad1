/// The `ERR_…` codes the RPC runtime itself puts in `Status.error_code`, named once.
///
/// They are the value names of `mrpc.v1.ErrorCode` (proto/mrpc/v1/envelope.proto), which clients
/// match on, so a misspelt literal would be a silent protocol change; `RuntimeErrorCodeTests`
/// checks every constant against the generated enum. Services add codes of their own
/// (`moderation.v1.ErrorCode`). `resourceExhausted` is the one code the client library makes up
/// locally and never reads from the wire.
public enum RuntimeErrorCode {
    /// UNAUTHENTICATED: the HELLO's API key is missing or wrong.
    public static let unauthenticated = "ERR_UNAUTHENTICATED"
    /// INVALID_ARGUMENT: a message or call header does not decode.
    public static let invalidArgument = "ERR_INVALID_ARGUMENT"
    /// UNIMPLEMENTED: no method at the call's path.
    public static let unimplemented = "ERR_UNIMPLEMENTED"
    /// DEADLINE_EXCEEDED: the call's deadline passed.
    public static let deadlineExceeded = "ERR_DEADLINE_EXCEEDED"
    /// RESOURCE_EXHAUSTED: a frame, header or body over its limit.
    public static let messageTooLarge = "ERR_MESSAGE_TOO_LARGE"
    /// RESOURCE_EXHAUSTED: more calls in flight than the connection allows.
    public static let tooManyCalls = "ERR_TOO_MANY_CALLS"
    /// RESOURCE_EXHAUSTED: a stream's reader did not keep up.
    public static let slowConsumer = "ERR_SLOW_CONSUMER"
    /// CANCELLED: the client cancelled the call, or the connection went away under it.
    public static let cancelled = "ERR_CANCELLED"
    /// UNAVAILABLE: the server is shutting down, or the connection was idle.
    public static let unavailable = "ERR_UNAVAILABLE"
    /// INVALID_ARGUMENT: the peer broke the framing protocol; the connection closes.
    public static let protocolViolation = "ERR_PROTOCOL"
    /// INTERNAL: the server failed while handling the call.
    public static let internalError = "ERR_INTERNAL"
    /// RESOURCE_EXHAUSTED: the app is over its request rate; details carry `retry_after_ms`.
    public static let rateLimited = "ERR_RATE_LIMITED"
    /// INVALID_ARGUMENT: a body marked compressed is not valid raw deflate data.
    public static let badEncoding = "ERR_BAD_ENCODING"
    /// RESOURCE_EXHAUSTED: the server's memory budget is spent; the work is refused, retry later.
    public static let overloaded = "ERR_OVERLOADED"
    /// RESOURCE_EXHAUSTED (in GOAWAY): the app, or the server, has its maximum of connections.
    public static let tooManyConnections = "ERR_TOO_MANY_CONNECTIONS"
    /// RESOURCE_EXHAUSTED, client side only: the server does not read and the client's output
    /// buffer is full, so the call is refused before it is sent.
    public static let resourceExhausted = "ERR_RESOURCE_EXHAUSTED"
}
