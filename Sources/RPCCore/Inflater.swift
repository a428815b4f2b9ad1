internal import CZlib
import ProtoBridge

/// One inflate context that never produces more than the caller's limit.
///
/// The cap is enforced while inflating, in bounded output steps: a compression bomb (deflate can
/// expand ~1030:1) is refused after at most `limit` bytes, never allocated in full. A stream keeps
/// one inflater (context takeover); unary bodies use `inflateIndependent`, which resets first.
/// Our protocol sends raw deflate (`.raw`); gRPC's message encodings wrap it (`.zlib` for
/// `deflate`, `.gzip`), and a wrapped message must end its stream.
public final class Inflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private let format: CompressionFormat
    private var finished = false

    /// - Parameters:
    ///   - windowBits: log2 of the window, 9–15; 15 accepts a sender with any window.
    ///   - format: raw deflate, or deflate in a zlib or gzip wrapper.
    public init(windowBits: Int32 = 15, format: CompressionFormat = .raw) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        self.format = format
        let status = czlib_inflate_init2(stream, format.zlibWindowBits(windowBits))
        precondition(status == Z_OK, "inflateInit2 failed with \(status): out of memory")
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
    }

    /// Why inflating failed.
    public enum Failure: Error, Equatable {
        /// The inflated message would exceed the limit.
        case tooLarge(limit: Int)
        /// The bytes are not valid raw deflate data.
        case corrupt(String)
    }

    /// Inflates one message of a stream (context kept): appends the sync-flush tail to `input`
    /// and appends the inflated bytes to `output`.
    public func inflateStreamMessage(
        _ input: UnsafeRawBufferPointer, limit: Int, appendingTo output: inout [UInt8]
    ) throws(Failure) {
        guard !finished else { throw .corrupt("the stream's deflate data already ended") }
        try run(input, limit: limit, appendingTo: &output)
    }

    /// Inflates one independently compressed body (a complete raw-deflate stream, or one ended
    /// with a sync flush whose tail was removed).
    public func inflateIndependent(
        _ input: UnsafeRawBufferPointer, limit: Int, appendingTo output: inout [UInt8]
    ) throws(Failure) {
        inflateReset(stream)
        finished = false
        defer {
            inflateReset(stream)
            finished = false
        }
        try run(input, limit: limit, appendingTo: &output)
    }

    /// `inflateStreamMessage` over an array.
    public func inflateStreamMessage(_ input: [UInt8], limit: Int, appendingTo output: inout [UInt8]) throws(Failure) {
        try input.withUnsafeBytes { raw in
            Result { () throws(Failure) in try inflateStreamMessage(raw, limit: limit, appendingTo: &output) }
        }.get()
    }

    /// `inflateIndependent` over an array.
    public func inflateIndependent(_ input: [UInt8], limit: Int, appendingTo output: inout [UInt8]) throws(Failure) {
        try input.withUnsafeBytes { raw in
            Result { () throws(Failure) in try inflateIndependent(raw, limit: limit, appendingTo: &output) }
        }.get()
    }

    private func run(_ input: UnsafeRawBufferPointer, limit: Int, appendingTo output: inout [UInt8]) throws(Failure) {
        let start = output.count
        try feed(input, limit: limit, start: start, output: &output)
        guard format == .raw else {
            // A zlib or gzip message is a whole stream, its checksum included.
            if !finished { throw .corrupt("the compressed message ends before its \(format) stream does") }
            return
        }
        if !finished {
            let result = Deflater.syncFlushTail.withUnsafeBytes { tail in
                Result { () throws(Failure) in try feed(tail, limit: limit, start: start, output: &output) }
            }
            try result.get()
        }
    }

    private func feed(
        _ input: UnsafeRawBufferPointer, limit: Int, start: Int, output: inout [UInt8]
    ) throws(Failure) {
        guard input.count > 0, !finished else { return }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress!.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.avail_in = 0
        }
        var more = true
        // Output steps start near the expected size and double up to 64 KiB: zero-filling a full
        // 64 KiB step for every small stream message would cost more than inflating it.
        var step = min(64 * 1024, max(1024, input.count * 4))
        while more {
            let produced = output.count - start
            // One byte of room past the limit tells "exactly at the limit" from "over it".
            let room = min(step, limit - produced + 1)
            step = min(64 * 1024, step * 2)
            guard room > 0 else { throw .tooLarge(limit: limit) }
            let before = output.count
            output.appendZeros(room)
            let status: Int32 = output.withUnsafeMutableBufferPointer { buffer in
                stream.pointee.next_out = buffer.baseAddress! + before
                stream.pointee.avail_out = uInt(room)
                return inflate(stream, Z_SYNC_FLUSH)
            }
            let outputFull = stream.pointee.avail_out == 0
            output.removeLast(Int(stream.pointee.avail_out))
            if output.count - start > limit { throw .tooLarge(limit: limit) }
            switch status {
            case Z_OK:
                break
            case Z_STREAM_END:
                finished = true
                return
            case Z_BUF_ERROR:
                // No progress was possible: fine when the input is used up, an error otherwise.
                if stream.pointee.avail_in > 0 && output.count == before { throw .corrupt("inflate made no progress") }
            default:
                let reason = stream.pointee.msg.map { String(cString: $0) } ?? "error \(status)"
                throw .corrupt(reason)
            }
            more = stream.pointee.avail_in > 0 || outputFull
        }
    }
}

/// How deflate data is wrapped: bare (RFC 1951, our protocol), in a zlib stream (RFC 1950, gRPC's
/// `deflate`) or in a gzip member (RFC 1952, gRPC's `gzip`).
public enum CompressionFormat: Sendable, Equatable, CustomStringConvertible {
    case raw
    case zlib
    case gzip

    /// zlib's `windowBits` argument for this format: negative for raw, +16 for gzip.
    func zlibWindowBits(_ bits: Int32) -> Int32 {
        switch self {
        case .raw: -bits
        case .zlib: bits
        case .gzip: bits + 16
        }
    }

    public var description: String {
        switch self {
        case .raw: "raw deflate"
        case .zlib: "zlib"
        case .gzip: "gzip"
        }
    }
}
