import RPCCore
import RPCMessages
import RPCPosix
import TestSupport
import Testing

/// Frames another thread hands a connection faster than its loop takes them (a fan-out) reach
/// the client whole and in order, however many pile up in the connection's port: the
/// connection takes them in slices, writing between two.
@Suite("A connection's port: many frames handed over at once")
struct PortDeliveryTests {
    @Test("several slices' worth of messages to two streams, held back and handed over in one go, all arrive in order")
    func manySlicesInOrder() throws {
        let server = try TestServer()
        defer { server.stop() }
        let connection = try server.connect()
        defer { connection.close() }
        let first = Collector<[UInt8]>()
        let second = Collector<[UInt8]>()
        let streams = [
            connection.serverStream(
                TestService.follow, EchoRequest(), onMessage: { first.append($0.payload) }, onEnd: { _ in }),
            connection.serverStream(
                TestService.follow, EchoRequest(), onMessage: { second.append($0.payload) }, onEnd: { _ in }),
        ]
        // Each stream's first message says it is running.
        #expect(first.waitForCount(1) && second.waitForCount(1))
        // About 115 bytes a frame: 3 000 for each stream are some 690 KiB, over five slices, and
        // under a stream's unwritten limit (1 MiB).
        let perStream = 3_000
        WakeDeferral.batch {
            for seq in 2..<(2 + perStream) {
                for stream in streams { #expect(server.service.send(on: stream.streamID, seq: seq) == .sent) }
            }
        }
        #expect(first.waitForCount(1 + perStream) && second.waitForCount(1 + perStream))
        let expected = (2..<(2 + perStream)).map(TestService.streamPayload(seq:))
        #expect(Array(first.items.dropFirst()) == expected)
        #expect(Array(second.items.dropFirst()) == expected)
    }
}
