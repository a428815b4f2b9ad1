import RPCCore
import RPCMessages
import Testing

/// The runtime's `ERR_…` codes are the value names of `mrpc.v1.ErrorCode`, which clients match
/// on, and each travels with one canonical status on every wire: a misspelt or missing code, or
/// a status chosen elsewhere, would change the protocol silently.
@Suite("RuntimeErrorCode: the runtime's error codes and their statuses")
struct RuntimeErrorCodeTests {
    /// Every code the server sends, the `mrpc.v1.ErrorCode` value it names and its status.
    static let table: [(code: RuntimeErrorCode, value: ErrorCode, status: StatusCode)] = [
        (.unauthenticated, .errUnauthenticated, .unauthenticated),
        (.invalidArgument, .errInvalidArgument, .invalidArgument),
        (.unimplemented, .errUnimplemented, .unimplemented),
        (.deadlineExceeded, .errDeadlineExceeded, .deadlineExceeded),
        (.messageTooLarge, .errMessageTooLarge, .resourceExhausted),
        (.tooManyCalls, .errTooManyCalls, .resourceExhausted),
        (.slowConsumer, .errSlowConsumer, .resourceExhausted),
        (.cancelled, .errCancelled, .cancelled),
        (.unavailable, .errUnavailable, .unavailable),
        (.protocolViolation, .errProtocol, .invalidArgument),
        (.internalError, .errInternal, .internal),
        (.rateLimited, .errRateLimited, .resourceExhausted),
        (.badEncoding, .errBadEncoding, .invalidArgument),
        (.overloaded, .errOverloaded, .resourceExhausted),
        (.tooManyConnections, .errTooManyConnections, .resourceExhausted),
        (.notFound, .errNotFound, .notFound),
    ]

    @Test("each code is the name of its mrpc.v1.ErrorCode value and carries its status", arguments: table)
    func namesAndStatuses(code: RuntimeErrorCode, value: ErrorCode, status: StatusCode) {
        #expect(code.name == value.protoValueName)
        #expect(code.status == status)
        let error = RPCError(code, "m")
        #expect(error.code == status)
        #expect(error.errorCode == code.name)
        #expect(error.runtimeCode == code)
    }

    @Test("every mrpc.v1.ErrorCode value but the zero one is a code the server sends")
    func everyValueNamed() {
        let named = Set(Self.table.map(\.code.name))
        let values = ErrorCode.allKnown.filter { $0 != .errUnspecified }.compactMap(\.protoValueName)
        #expect(Set(values) == named)
        #expect(Set(RuntimeErrorCode.allCases.filter { $0 != .resourceExhausted }.map(\.name)) == named)
    }

    @Test("the client's local refusal code is not one the server sends")
    func localCodeStaysLocal() {
        #expect(!ErrorCode.allKnown.contains { $0.protoValueName == RuntimeErrorCode.resourceExhausted.name })
    }

    @Test("a service's own code has no runtime code")
    func serviceCodes() {
        let error = RPCError(code: .notFound, errorCode: "ERR_GROUP_NOT_FOUND", message: "m")
        #expect(error.runtimeCode == nil)
    }
}
