public import RPCCore

/// Compressed inputs for tests: bodies, streams and bombs.
public enum DeflateSamples {
    /// `bytes` as one complete raw-deflate stream, as a client compresses a unary body.
    public static func independent(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        bytes.withUnsafeBytes { RawDeflater(windowBits: 15, memoryLevel: 8).compressIndependent($0, appendingTo: &out) }
        return out
    }

    /// Raw deflate data that inflates to `count` zero bytes (a bomb: ~1 000:1), built 1 MiB at a
    /// time so that making it never holds the inflated size in memory. Each piece ends with a
    /// sync flush whose `00 00 FF FF` is kept, so the whole is one valid, unfinished deflate stream.
    public static func zeros(count: Int) -> [UInt8] {
        let deflater = RawDeflater(windowBits: 15, memoryLevel: 8, level: 9)
        let chunk = [UInt8](repeating: 0, count: 1 << 20)
        var out: [UInt8] = []
        var left = count
        while left > 0 {
            let n = min(left, chunk.count)
            chunk.withUnsafeBytes { deflater.compressStreamMessage(UnsafeRawBufferPointer(rebasing: $0[0..<n]), appendingTo: &out) }
            out += RawDeflater.syncFlushTail
            left -= n
        }
        return out
    }
}
