import RPCCore
import Testing

@testable import ServerApp

/// The byte and stream-message counters of `/metrics`, fed as the loops (`transferred`) and the
/// event fan-out (`streamMessage`) feed them: each series shows what was added, in its own block.
@Suite("Metrics: traffic and stream-message counters")
struct TrafficCountersTests {
    @Test(
        "each series counts what its feeder reported, and nothing of the others'",
        arguments: [
            (received: [0], sent: [0], messages: [(encoded: 0, wire: 0)]),
            (received: [100, 20], sent: [7], messages: []),
            (received: [], sent: [], messages: [(encoded: 130, wire: 130), (encoded: 130, wire: 23)]),
            (received: [5], sent: [1_000_000], messages: Array(repeating: (encoded: 129, wire: 129), count: 10)),
        ])
    func counts(received: [Int], sent: [Int], messages: [(encoded: Int, wire: Int)]) {
        let metrics = ServerMetrics(methods: [], accessLog: nil, gauges: { [] })
        for bytes in received { metrics.transferred(received: bytes, sent: 0) }
        for bytes in sent { metrics.transferred(received: 0, sent: bytes) }
        for message in messages {
            metrics.streamMessage(encodedBytes: message.encoded, wireBytes: message.wire, methodIndex: nil, wire: .mrpc)
        }
        let text = metrics.render()
        #expect(text.contains("mrpc_received_bytes_total \(received.reduce(0, +))\n"))
        #expect(text.contains("mrpc_sent_bytes_total \(sent.reduce(0, +))\n"))
        #expect(text.contains("mrpc_stream_messages_total \(messages.count)\n"))
        #expect(text.contains("mrpc_stream_encoded_bytes_total \(messages.reduce(0) { $0 + $1.encoded })\n"))
        #expect(text.contains("mrpc_stream_wire_bytes_total \(messages.reduce(0) { $0 + $1.wire })\n"))
        #expect(metrics.bytesTransferred == UInt64(received.reduce(0, +) + sent.reduce(0, +)))
    }

    @Test("the heap trimmer's activity moves when a connection closes, with no byte sent")
    func closingIsActivity() {
        let metrics = ServerMetrics(methods: [], accessLog: nil, gauges: { [] })
        metrics.connectionOpened()
        let before = metrics.activity
        metrics.connectionClosed()
        #expect(metrics.activity != before)
        #expect(metrics.bytesTransferred == 0)
    }
}
