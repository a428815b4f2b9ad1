import RPCCore
import RPCMessages
import Testing

/// The runtime's `ERR_…` constants are the value names of `mrpc.v1.ErrorCode`, which clients
/// match on: a misspelt or missing constant would change the protocol silently.
@Suite("RuntimeErrorCode: the runtime's error codes")
struct RuntimeErrorCodeTests {
    /// Every constant that names a value of `mrpc.v1.ErrorCode`, with that value.
    static let onTheWire: [(constant: String, value: ErrorCode)] = [
        (RuntimeErrorCode.unauthenticated, .errUnauthenticated),
        (RuntimeErrorCode.invalidArgument, .errInvalidArgument),
        (RuntimeErrorCode.unimplemented, .errUnimplemented),
        (RuntimeErrorCode.deadlineExceeded, .errDeadlineExceeded),
        (RuntimeErrorCode.messageTooLarge, .errMessageTooLarge),
        (RuntimeErrorCode.tooManyCalls, .errTooManyCalls),
        (RuntimeErrorCode.slowConsumer, .errSlowConsumer),
        (RuntimeErrorCode.cancelled, .errCancelled),
        (RuntimeErrorCode.unavailable, .errUnavailable),
        (RuntimeErrorCode.protocolViolation, .errProtocol),
        (RuntimeErrorCode.internalError, .errInternal),
        (RuntimeErrorCode.rateLimited, .errRateLimited),
        (RuntimeErrorCode.badEncoding, .errBadEncoding),
        (RuntimeErrorCode.overloaded, .errOverloaded),
        (RuntimeErrorCode.tooManyConnections, .errTooManyConnections),
    ]

    @Test("each constant is the name of its mrpc.v1.ErrorCode value")
    func namesMatchTheProto() {
        for (constant, value) in Self.onTheWire {
            #expect(constant == value.protoValueName, "\(value)")
        }
    }

    @Test("every mrpc.v1.ErrorCode value but the zero one has a constant")
    func everyValueNamed() {
        let named = Set(Self.onTheWire.map(\.constant))
        let values = ErrorCode.allKnown.filter { $0 != .errUnspecified }.compactMap(\.protoValueName)
        #expect(Set(values) == named)
        #expect(values.count == named.count)
    }

    @Test("the client's local refusal code is not one the server sends")
    func localCodeStaysLocal() {
        #expect(!ErrorCode.allKnown.contains { $0.protoValueName == RuntimeErrorCode.resourceExhausted })
    }
}
