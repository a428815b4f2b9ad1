/// The bytes submitted for a stream and not yet handed to nghttp2: chunks kept as given (no copy
/// on append), read from the front into nghttp2's frame buffer.
struct ByteQueue {
    private var chunks: [[UInt8]] = []
    /// The first chunk still (partly) unread.
    private var head = 0
    /// Bytes of `chunks[head]` already read.
    private var offset = 0
    /// Unread bytes in all.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        chunks.append(bytes)
        count += bytes.count
    }

    /// Copies up to `capacity` bytes from the front to `destination`; returns how many.
    mutating func read(into destination: UnsafeMutableRawPointer, capacity: Int) -> Int {
        var written = 0
        while written < capacity, head < chunks.count {
            let n = chunks[head].withUnsafeBytes { chunk in
                let n = min(chunk.count - offset, capacity - written)
                (destination + written).copyMemory(from: chunk.baseAddress! + offset, byteCount: n)
                return n
            }
            written += n
            offset += n
            if offset == chunks[head].count {
                head += 1
                offset = 0
            }
        }
        count -= written
        if head == chunks.count {
            chunks.removeAll(keepingCapacity: chunks.count <= 16)
            head = 0
        } else if head >= 32, head * 2 >= chunks.count {
            chunks.removeFirst(head)
            head = 0
        }
        return written
    }
}
