internal import CZlib

/// Compressed inputs for tests: bodies and bombs, made with zlib directly (not with the runtime's
/// `Deflater`, so they also check that the runtime reads what plain zlib writes).
public enum DeflateSamples {
    /// `bytes` as one complete raw-deflate stream (window 2^15), as a client compresses a unary body.
    public static func independent(_ bytes: [UInt8]) -> [UInt8] {
        let zlib = Zlib()
        defer { zlib.end() }
        var out: [UInt8] = []
        bytes.withUnsafeBytes { zlib.deflate($0, flush: Z_FINISH, into: &out) }
        return out
    }

    /// Raw deflate data that inflates to `count` zero bytes: a bomb (~1 000:1). It is made 1 MiB
    /// at a time, so making it never holds the inflated size, and ends with a sync flush whose
    /// `00 00 FF FF` is kept: one valid deflate stream, usable as a unary body or stream message.
    public static func zeros(count: Int) -> [UInt8] {
        let zlib = Zlib()
        defer { zlib.end() }
        let chunk = [UInt8](repeating: 0, count: 1 << 20)
        var out: [UInt8] = []
        var left = count
        repeat {
            let n = min(left, chunk.count)
            left -= n
            chunk.withUnsafeBytes {
                zlib.deflate(
                    UnsafeRawBufferPointer(rebasing: $0[0..<n]), flush: left == 0 ? Z_SYNC_FLUSH : Z_NO_FLUSH,
                    into: &out)
            }
        } while left > 0
        return out
    }

    /// One zlib raw-deflate context at level 9, window 2^15.
    private struct Zlib {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)

        init() {
            stream.initialize(to: z_stream())
            precondition(czlib_deflate_init2(stream, 9, -15, 8) == Z_OK)
        }

        func end() {
            deflateEnd(stream)
            stream.deallocate()
        }

        /// Compresses `input`, appending everything zlib writes for `flush`.
        func deflate(_ input: UnsafeRawBufferPointer, flush: Int32, into out: inout [UInt8]) {
            stream.pointee.next_in = UnsafeMutablePointer(
                mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = uInt(input.count)
            // Output space from Array(repeating:), not append(repeatElement): the latter is
            // ~1 000× slower in a debug build.
            var space = [UInt8](repeating: 0, count: 64 * 1024)
            repeat {
                let produced: Int = space.withUnsafeMutableBufferPointer { buffer in
                    stream.pointee.next_out = buffer.baseAddress
                    stream.pointee.avail_out = uInt(buffer.count)
                    _ = CZlib.deflate(stream, flush)
                    return buffer.count - Int(stream.pointee.avail_out)
                }
                out += space[0..<produced]
            } while stream.pointee.avail_out == 0 || stream.pointee.avail_in > 0
        }
    }
}
