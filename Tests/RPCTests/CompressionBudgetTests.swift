import ProtoBridge
import RPCCore
import RPCMessages
import TestSupport
import Testing

/// A compressed server stream's deflate context: made on its first message worth compressing
/// (not with the stream), counted in the memory budget while it exists, and given back when the
/// stream ends (an earlier build had every compressed subscription hold ~23 KiB from its start,
/// with no overall cap). With no room in the budget, messages go uncompressed.
@Suite("Compression: a stream's deflate context and the memory budget")
struct CompressionBudgetTests {
    static let event = [UInt8](repeating: 0x41, count: 200)

    static func stream(
        acceptsDeflate: Bool = true, budget: MemoryBudget, port: FakeCallPort = FakeCallPort()
    ) -> ServerStream<EchoResponse> {
        let call = ServerCall(
            context: CallContext(method: "/t/Stream", streamID: 1, appID: "app1"),
            compression: acceptsDeflate ? .framedDeflate : .none, port: port, memoryBudget: budget)
        return ServerStream(call: call, pendingLimit: 1 << 20)
    }

    /// Whether each stream message sent so far was compressed.
    static func compressedFlags(_ port: FakeCallPort) throws -> [Bool] {
        port.take().compactMap { delivery in
            guard case .message(let message) = delivery.part else { return nil }
            return message.compressed
        }
    }

    @Test("no deflate context until the first message worth compressing; counted while it exists; given back by finish")
    func lazyAndCounted() throws {
        let budget = MemoryBudget(limit: nil)
        let port = FakeCallPort()
        let stream = Self.stream(budget: budget, port: port)
        #expect(!stream.holdsDeflater && budget.inUse(.compression) == 0, "a new stream holds no deflate state")
        stream.send(encoded: [1, 2, 3]) // under the 32-byte threshold: sent as it is
        #expect(!stream.holdsDeflater && budget.inUse(.compression) == 0)
        stream.send(encoded: Self.event)
        stream.send(encoded: Self.event)
        #expect(stream.holdsDeflater)
        #expect(budget.inUse(.compression) == ServerStream<EchoResponse>.deflaterBytes)
        #expect(try Self.compressedFlags(port) == [false, true, true])
        stream.finish()
        #expect(!stream.holdsDeflater && budget.inUse(.compression) == 0 && budget.inUse == 0)
    }

    @Test("a stream whose client does not accept deflate never makes a context")
    func plainStream() throws {
        let budget = MemoryBudget(limit: nil)
        let port = FakeCallPort()
        let stream = Self.stream(acceptsDeflate: false, budget: budget, port: port)
        for _ in 0..<3 { stream.send(encoded: Self.event) }
        #expect(!stream.holdsDeflater && budget.inUse == 0)
        #expect(try Self.compressedFlags(port) == [false, false, false])
    }

    @Test("with no room in the budget, messages go uncompressed until there is")
    func uncompressedWhileTheBudgetIsSpent() throws {
        let context = ServerStream<EchoResponse>.deflaterBytes
        let budget = MemoryBudget(limit: context + 100)
        budget.reserve(200, for: .outbound) // someone else holds part of the budget
        let port = FakeCallPort()
        let stream = Self.stream(budget: budget, port: port)
        stream.send(encoded: Self.event)
        #expect(!stream.holdsDeflater && budget.inUse(.compression) == 0)
        budget.release(200, for: .outbound)
        stream.send(encoded: Self.event)
        stream.send(encoded: Self.event)
        #expect(stream.holdsDeflater && budget.inUse(.compression) == context)
        let flags = try Self.compressedFlags(port)
        #expect(flags == [false, true, true])
        stream.finish()
        #expect(budget.inUse == 0)
    }

    @Test("a stream ended from outside gives its context back at its next send, or when it is freed")
    func endedFromOutside() {
        let budget = MemoryBudget(limit: nil)
        let cancelled = Self.stream(budget: budget)
        cancelled.send(encoded: Self.event)
        #expect(budget.inUse(.compression) == ServerStream<EchoResponse>.deflaterBytes)
        // As the session ends a cancelled call: completed, then told.
        _ = cancelled.call.complete(.cancelled("the client cancelled"))
        cancelled.call.terminate(.cancelled)
        #expect(cancelled.send(encoded: Self.event) == .closed)
        #expect(!cancelled.holdsDeflater && budget.inUse(.compression) == 0)

        weak var freed: ServerStream<EchoResponse>?
        do {
            let dropped = Self.stream(budget: budget)
            freed = dropped
            dropped.send(encoded: Self.event)
            #expect(budget.inUse(.compression) == ServerStream<EchoResponse>.deflaterBytes)
        }
        #expect(freed == nil)
        #expect(budget.inUse(.compression) == 0, "a stream freed without finishing still gives its context back")
    }
}
