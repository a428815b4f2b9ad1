import RPCCore
import Testing

/// `RPCError.cause`: kept on this side for logs and tests, never part of what the peer sees.
@Suite("RPCError cause")
struct RPCErrorTests {
    struct Underlying: Error, Equatable {
        let reason: String
    }

    @Test("caused(by:) keeps the error it reports and changes nothing that travels")
    func keepsCause() throws {
        let plain = RPCError.invalidArgument("bad body")
        let wrapped = plain.caused(by: Underlying(reason: "truncated"))
        #expect(try #require(wrapped.cause as? Underlying) == Underlying(reason: "truncated"))
        #expect(plain.cause == nil)
        #expect(wrapped.status == plain.status)
    }

    @Test("equality compares what the peer sees, not the cause")
    func equalityIgnoresCause() {
        let plain = RPCError.internal("store closed")
        #expect(plain.caused(by: Underlying(reason: "a")) == plain.caused(by: Underlying(reason: "b")))
        #expect(plain.caused(by: Underlying(reason: "a")) != RPCError.internal("other"))
    }
}
