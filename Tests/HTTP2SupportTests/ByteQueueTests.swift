import Testing

@testable import HTTP2Support

/// ByteQueue: chunks appended are read back in order, whole or split across reads of any size,
/// and the queue is reusable once empty.
@Suite("ByteQueue: chunks read back in order across reads of any size")
struct ByteQueueTests {
    /// Appends `chunks`, reads with `capacities` (repeated) until empty, returns the bytes read.
    static func drain(_ chunks: [[UInt8]], capacities: [Int]) -> [UInt8] {
        var queue = ByteQueue()
        for chunk in chunks { queue.append(chunk) }
        var out: [UInt8] = []
        var turn = 0
        while !queue.isEmpty {
            let capacity = capacities[turn % capacities.count]
            var buffer = [UInt8](repeating: 0, count: capacity)
            let n = buffer.withUnsafeMutableBytes { queue.read(into: $0.baseAddress!, capacity: capacity) }
            #expect(n == min(capacity, n + queue.count))
            out += buffer[..<n]
            turn += 1
        }
        return out
    }

    static let cases: [(chunks: [[UInt8]], capacities: [Int])] = [
        ([[1, 2, 3]], [16]),
        ([[1, 2, 3]], [1]),
        ([[1, 2], [], [3, 4, 5], [6]], [4]),
        ([[1, 2], [3, 4, 5], [6]], [1, 2]),
        ((0..<100).map { [UInt8($0), UInt8($0)] }, [3]),
        ((0..<100).map { [UInt8($0)] }, [7, 1]),
    ]

    @Test("the bytes come out as they went in", arguments: cases.indices)
    func order(index: Int) {
        let (chunks, capacities) = Self.cases[index]
        #expect(Self.drain(chunks, capacities: capacities) == chunks.flatMap { $0 })
    }

    @Test("appends after a partial read and after emptying keep their order")
    func interleaved() {
        var queue = ByteQueue()
        var buffer = [UInt8](repeating: 0, count: 8)
        queue.append([1, 2, 3])
        var n = buffer.withUnsafeMutableBytes { queue.read(into: $0.baseAddress!, capacity: 2) }
        #expect(Array(buffer[..<n]) == [1, 2])
        queue.append([4])
        n = buffer.withUnsafeMutableBytes { queue.read(into: $0.baseAddress!, capacity: 8) }
        #expect(Array(buffer[..<n]) == [3, 4])
        #expect(queue.isEmpty)
        queue.append([5, 6])
        queue.append([7])
        n = buffer.withUnsafeMutableBytes { queue.read(into: $0.baseAddress!, capacity: 8) }
        #expect(Array(buffer[..<n]) == [5, 6, 7])
        #expect(queue.count == 0)
    }
}
