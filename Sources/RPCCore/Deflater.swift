internal import CZlib
import ProtoBridge

/// One deflate (RFC 1951) compression context, for a compressed stream or unary bodies.
///
/// A stream keeps one deflater for its whole life (context takeover): each message is ended with
/// `Z_SYNC_FLUSH` and its `00 00 FF FF` tail removed, as WebSocket permessage-deflate does, so the
/// dictionary built from earlier events compresses later ones. The window and memory level are
/// small by default (2^12 bytes, memory level 2): 24 KiB of zlib state per context (zlib's own
/// allocations, measured) instead of 262 KiB at its defaults. On a mixed event stream the 2^12
/// window compresses 8.6× where 2^15 does 12.6× and 2^11 only 6.2×; memory level 2 compresses
/// as well as 4 did (30 KiB) on those short messages, for a few percent more CPU.
public final class Deflater {
    /// The trailing bytes of a sync flush, removed from each message and appended back by the receiver.
    public static let syncFlushTail: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]

    /// The window of a server stream's deflater (log2 bytes), as docs/PROTOCOL.md states it.
    public static let streamWindowBits: Int32 = 12
    /// The memory level of a server stream's deflater.
    public static let streamMemoryLevel: Int32 = 2

    private let stream: UnsafeMutablePointer<z_stream>

    /// Bytes one context holds: zlib's allocations (its state of ~5.9 KB, a window and a
    /// previous-match table of 2 × 2^windowBits bytes each, a hash table and a pending buffer of
    /// 2^(memoryLevel + 8) bytes each), plus the `z_stream` and this object, rounded up. What a
    /// stream reserves in the memory budget (kind `.compression`).
    public static func estimatedBytes(windowBits: Int32, memoryLevel: Int32) -> Int {
        6 * 1024 + (1 << Int(windowBits + 2)) + (1 << Int(memoryLevel + 9)) + 256
    }

    /// - Parameters:
    ///   - windowBits: log2 of the window, 9–15.
    ///   - memoryLevel: zlib's memLevel, 1–9.
    ///   - level: compression level, 0–9.
    ///   - format: raw deflate (our protocol), or deflate in a zlib or gzip wrapper (gRPC's
    ///     message encodings, written whole by `compressIndependent`).
    public init(
        windowBits: Int32 = Deflater.streamWindowBits, memoryLevel: Int32 = Deflater.streamMemoryLevel,
        level: Int32 = 6, format: CompressionFormat = .raw
    ) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = czlib_deflate_init2(stream, level, format.zlibWindowBits(windowBits), memoryLevel)
        precondition(status == Z_OK, "deflateInit2 failed with \(status): out of memory or bad parameters")
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
    }

    /// Compresses one message of a stream (context kept), appending the compressed bytes without
    /// the sync-flush tail to `output`.
    public func compressStreamMessage(_ input: UnsafeRawBufferPointer, appendingTo output: inout [UInt8]) {
        let start = output.count
        run(input, flush: Z_SYNC_FLUSH, appendingTo: &output)
        if output.count - start >= 4, output[(output.count - 4)...].elementsEqual(Self.syncFlushTail) {
            output.removeLast(4)
        } else if output.count == start {
            // An empty message right after a flush makes zlib write nothing (Z_BUF_ERROR), but the
            // receiver appends the tail, which alone is not a block: send the empty stored block's
            // header byte, as RFC 7692 §7.2.3.6 does.
            output.append(0x00)
        }
    }

    /// Compresses `input` as one complete, independent raw-deflate stream (unary bodies).
    public func compressIndependent(_ input: UnsafeRawBufferPointer, appendingTo output: inout [UInt8]) {
        deflateReset(stream)
        run(input, flush: Z_FINISH, appendingTo: &output)
        deflateReset(stream)
    }

    private func run(_ input: UnsafeRawBufferPointer, flush: Int32, appendingTo output: inout [UInt8]) {
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        var chunk = Int(deflateBound(stream, uLong(input.count))) + 16
        while true {
            let start = output.count
            output.appendZeros(chunk)
            let status: Int32 = output.withUnsafeMutableBufferPointer { buffer in
                stream.pointee.next_out = buffer.baseAddress! + start
                stream.pointee.avail_out = uInt(chunk)
                return deflate(stream, flush)
            }
            let produced = chunk - Int(stream.pointee.avail_out)
            output.removeLast(chunk - produced)
            let done = flush == Z_FINISH ? status == Z_STREAM_END : stream.pointee.avail_out > 0
            if done || (status != Z_OK && status != Z_BUF_ERROR) { break }
            chunk = 4096
        }
        stream.pointee.next_in = nil
        stream.pointee.avail_in = 0
    }
}
