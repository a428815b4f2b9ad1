import RPCCore

/// The compression contexts of gRPC's message encodings (`gzip`, `deflate` = zlib), one per
/// thread and format: each message is compressed or inflated whole, so a context is never held
/// for a client between messages and is not counted in the memory budget.
enum GRPCCompression {
    private static let gzipInflater = ThreadLocal { Inflater(format: .gzip) }
    private static let zlibInflater = ThreadLocal { Inflater(format: .zlib) }
    private static let gzipDeflater = ThreadLocal { Deflater(windowBits: 15, memoryLevel: 8, format: .gzip) }
    private static let zlibDeflater = ThreadLocal { Deflater(windowBits: 15, memoryLevel: 8, format: .zlib) }

    /// This thread's inflater for `format` (gzip or zlib; raw deflate is not a gRPC encoding).
    static func inflater(_ format: CompressionFormat) -> Inflater {
        format == .gzip ? gzipInflater.value : zlibInflater.value
    }

    /// This thread's deflater for `format`.
    static func deflater(_ format: CompressionFormat) -> Deflater {
        format == .gzip ? gzipDeflater.value : zlibDeflater.value
    }
}
