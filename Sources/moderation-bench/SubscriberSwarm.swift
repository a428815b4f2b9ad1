import ByteCoding
internal import CSystemShims
internal import Glibc
import ModerationMessages
import ProtoBridge
import RPCCore
import RPCMessages

/// Many `Subscribe` streams on raw sockets, read by one epoll loop: the receiving side of the
/// fan-out benchmark. It only frames and counts, and reads each event's seq without decoding the
/// rest, so that the client costs far less than the server it measures.
final class SubscriberSwarm {
    private struct Subscriber {
        let fd: Int32
        var pending: [UInt8] = []
        var lastSeq: UInt64 = 0
        var messages: UInt64 = 0
        var wireBytes: UInt64 = 0
        var ended: String?
        /// When the stream's first message (`started`: the subscription is live) arrived; 0 before.
        var startedAt: UInt64 = 0
    }

    private var subscribers: [Subscriber] = []
    private let epoll: Int32
    private var scratch = [UInt8](repeating: 0, count: 256 * 1024)
    /// When each subscriber first saw the seq being waited for.
    private var arrivals: [UInt64] = []

    var count: Int { subscribers.count }
    var ended: [String] { subscribers.compactMap(\.ended) }
    var totalMessages: UInt64 { subscribers.reduce(0) { $0 + $1.messages } }
    var totalWireBytes: UInt64 { subscribers.reduce(0) { $0 + $1.wireBytes } }
    var maxSeq: UInt64 { subscribers.reduce(0) { max($0, $1.lastSeq) } }
    /// Subscribers whose stream has said it is live.
    var startedCount: Int { subscribers.reduce(0) { $0 + ($1.startedAt > 0 ? 1 : 0) } }
    /// When the last subscriber's stream said it was live (monotonic ns; 0 until all have).
    var allStartedAt: UInt64 {
        subscribers.allSatisfy { $0.startedAt > 0 } ? subscribers.reduce(0) { max($0, $1.startedAt) } : 0
    }

    /// Opens `count` connections; connection `i` subscribes as user `uid(i)` (its own events).
    init(port: UInt16, count: Int, compressed: Bool, uid: (Int) -> String) throws(BenchError) {
        epoll = cshim_epoll_create()
        let body = SubscribeRequest().serializedBytes()
        for index in 0..<count {
            let fd = "127.0.0.1".withCString { cshim_connect($0, port, 5_000) }
            guard fd >= 0 else {
                throw BenchError("connect failed after \(index) subscribers: \(String(cString: strerror(-fd)))")
            }
            var out = Preface.bytes
            FrameWriter.hello(
                Hello(
                    apiKey: ServerProcess.apiKey, clientName: "bench-swarm",
                    acceptEncodings: compressed ? ["deflate"] : []), into: &out)
            let header = CallHeader(
                method: ModerationMethods.subscribe.path, onBehalfOf: uid(index),
                acceptEncodings: compressed ? ["deflate"] : [])
            _ = body.withUnsafeBytes { FrameWriter.call(streamID: 1, header: header, body: $0, into: &out) }
            guard send(fd, out, out.count, Int32(MSG_NOSIGNAL)) == out.count else { throw BenchError("send failed") }
            _ = cshim_set_nonblocking(fd, 1)
            _ = cshim_epoll_ctl(epoll, EPOLL_CTL_ADD, fd, 0x001, UInt64(subscribers.count))
            subscribers.append(Subscriber(fd: fd))
        }
        arrivals = [UInt64](repeating: 0, count: count)
    }

    deinit {
        for subscriber in subscribers { close(subscriber.fd) }
        close(epoll)
    }

    /// Reads until every open subscriber has seen `seq` (or the timeout): returns when the first
    /// and the last of them saw it, and how many did.
    func wait(forSeq seq: UInt64, timeoutMs: Int) -> (first: UInt64, last: UInt64, reached: Int) {
        for i in arrivals.indices { arrivals[i] = subscribers[i].lastSeq >= seq ? 1 : 0 }
        let deadline = monotonicNanoseconds() + UInt64(timeoutMs) * 1_000_000
        var first: UInt64 = .max
        var last: UInt64 = 0
        var waiting = subscribers.indices.filter { subscribers[$0].lastSeq < seq && subscribers[$0].ended == nil }.count
        pump(until: { waiting == 0 || monotonicNanoseconds() >= deadline }) { index, now in
            guard self.arrivals[index] == 0, self.subscribers[index].lastSeq >= seq else { return }
            self.arrivals[index] = now
            first = min(first, now)
            last = max(last, now)
            waiting -= 1
        }
        return (first, last, subscribers.filter { $0.lastSeq >= seq }.count)
    }

    /// Reads for `milliseconds`; returns the messages received meanwhile.
    func drain(milliseconds: Int) -> UInt64 {
        let before = totalMessages
        let deadline = monotonicNanoseconds() + UInt64(milliseconds) * 1_000_000
        pump(until: { monotonicNanoseconds() >= deadline }) { _, _ in }
        return totalMessages - before
    }

    private func pump(until done: () -> Bool, onProgress: (Int, UInt64) -> Void) {
        var events = [UInt32](repeating: 0, count: 256)
        var data = [UInt64](repeating: 0, count: 256)
        while !done() {
            let n = cshim_epoll_wait(epoll, &events, &data, 256, 10)
            guard n > 0 else { continue }
            let now = monotonicNanoseconds()
            for i in 0..<Int(n) {
                let index = Int(data[i])
                readAll(index)
                onProgress(index, now)
            }
        }
    }

    private func readAll(_ index: Int) {
        while true {
            let n = scratch.withUnsafeMutableBytes { read(subscribers[index].fd, $0.baseAddress, $0.count) }
            if n <= 0 {
                if n == 0 && subscribers[index].ended == nil { subscribers[index].ended = "closed" }
                return
            }
            if subscribers[index].pending.isEmpty {
                // The common case: whole frames straight from the read buffer.
                let used = scratch.withUnsafeBytes { parse(index, UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
                if used < n { subscribers[index].pending += scratch[used..<n] }
            } else {
                subscribers[index].pending += scratch[0..<n]
                let pending = subscribers[index].pending
                let used = pending.withUnsafeBytes { parse(index, $0) }
                subscribers[index].pending.removeFirst(used)
            }
        }
    }

    /// Counts the complete frames at the start of `bytes`; returns the bytes they take.
    private func parse(_ index: Int, _ bytes: UnsafeRawBufferPointer) -> Int {
        var offset = 0
        while bytes.count - offset >= FrameHeader.size {
            let header = FrameHeader.read(
                from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + FrameHeader.size])
            ).header
            let total = FrameHeader.size + Int(header.length)
            guard bytes.count - offset >= total else { break }
            let payload = UnsafeRawBufferPointer(rebasing: bytes[(offset + FrameHeader.size)..<(offset + total)])
            switch header.type {
            case .message where subscribers[index].startedAt == 0:
                // The stream's first message is `started` (compressed or not): the subscription is live.
                subscribers[index].startedAt = cshim_monotonic_ns()
            case .message:
                subscribers[index].messages += 1
                subscribers[index].wireBytes += UInt64(header.length)
                if !header.isCompressed, let seq = Self.seq(payload) { subscribers[index].lastSeq = seq }
            case .trailers, .reply, .goaway:
                let status = try? Status(serializedBytes: payload)
                subscribers[index].ended = "\(header.type) \(status?.errorCode ?? "?"): \(status?.message ?? "")"
            default:
                break
            }
            offset += total
        }
        return offset
    }

    /// The seq of a SubscribeResponse: field 1 (action) holds, first, field 1 (seq).
    private static func seq(_ payload: UnsafeRawBufferPointer) -> UInt64? {
        var index = payload.startIndex
        func varint() -> UInt64? { try? Varint.read(from: payload, at: &index) }
        guard index < payload.endIndex, payload[index] == 0x0A else { return nil }
        index += 1
        guard varint() != nil, index < payload.endIndex, payload[index] == 0x08 else { return nil }
        index += 1
        return varint()
    }
}
