/// The bytes submitted for a stream and not yet handed to nghttp2: chunks kept as given (no copy
/// on append), read from the front into nghttp2's frame buffer.
///
/// The front chunk is held apart from the rest: most streams only ever queue one (a unary
/// call's answer), which then costs no array of chunks.
struct ByteQueue {
    /// The chunk being read.
    private var front: [UInt8] = []
    /// Bytes of `front` already read.
    private var offset = 0
    /// The chunks after `front`, in order, from `restHead` on.
    private var rest: [[UInt8]] = []
    private var restHead = 0
    /// Unread bytes in all.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        if count == 0 {
            front = bytes
            offset = 0
        } else {
            rest.append(bytes)
        }
        count += bytes.count
    }

    /// Copies up to `capacity` bytes from the front to `destination`; returns how many.
    mutating func read(into destination: UnsafeMutableRawPointer, capacity: Int) -> Int {
        var written = 0
        while written < capacity && count > written {
            if offset == front.count {
                front = rest[restHead]
                restHead += 1
                offset = 0
            }
            let n = front.withUnsafeBytes { chunk in
                let n = min(chunk.count - offset, capacity - written)
                (destination + written).copyMemory(from: chunk.baseAddress! + offset, byteCount: n)
                return n
            }
            written += n
            offset += n
        }
        count -= written
        if restHead == rest.count {
            if restHead > 0 { rest.removeAll(keepingCapacity: rest.count <= 16) }
            restHead = 0
        } else if restHead >= 32, restHead * 2 >= rest.count {
            rest.removeFirst(restHead)
            restHead = 0
        }
        if count == 0 {
            front = []
            offset = 0
        }
        return written
    }
}
