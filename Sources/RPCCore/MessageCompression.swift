public import ProtoBridge
internal import ThreadSupport

/// How a call's response messages are compressed, chosen by its wire when the call starts from
/// what the client said it accepts.
///
/// The compression happens where the message is encoded: on the thread that completes the call
/// (a worker, the large-request pool), so a large compressed reply costs its event loop nothing.
public enum MessageCompression: Sendable, Equatable {
    /// Messages go as they are.
    case none
    /// Our protocol with a peer that accepts `deflate`: a unary reply is one independent raw
    /// deflate block; a stream's messages go through the stream's own raw-deflate context
    /// (context takeover, `StreamWriter`).
    case framedDeflate
    /// gRPC with an accepted `grpc-encoding`: every message compressed on its own in it.
    case grpc(CompressionFormat)

    /// Unary bodies (and gRPC messages) at least this large are compressed when the peer accepts it.
    public static let threshold = 1024

    /// The message `bytes` as it goes out: compressed on its own (a unary reply, or any gRPC
    /// message) when it is large enough and that makes it smaller.
    public func independent(_ bytes: [UInt8]) -> ResponseMessage {
        if case .none = self { return ResponseMessage(bytes: bytes) }
        guard bytes.count >= Self.threshold else { return ResponseMessage(bytes: bytes) }
        var compressed: [UInt8] = []
        bytes.withUnsafeBytes { deflater.compressIndependent($0, appendingTo: &compressed) }
        guard compressed.count < bytes.count else { return ResponseMessage(bytes: bytes) }
        return ResponseMessage(bytes: compressed, compressed: true)
    }

    /// Appends `message`'s encoding to `buffer`, compressed on its own when it pays (see
    /// `independent`); returns whether it was compressed. Encoded straight into `buffer` when no
    /// compression applies.
    public func append<Message: ProtoMessage>(_ message: Message, to buffer: inout [UInt8]) -> Bool {
        if case .none = self {
            message.encode(appendingTo: &buffer)
            return false
        }
        var raw: [UInt8] = []
        message.encode(appendingTo: &raw)
        let out = independent(raw)
        buffer.append(contentsOf: out.bytes)
        return out.compressed
    }

    /// This thread's deflater for messages compressed on their own.
    private var deflater: Deflater {
        switch self {
        case .none, .framedDeflate: Self.rawDeflater.value
        case .grpc(let format): format == .gzip ? Self.gzipDeflater.value : Self.zlibDeflater.value
        }
    }

    /// This thread's inflater for a request message compressed in `format` (raw deflate on our
    /// protocol; gzip or zlib on gRPC), used within one call and never held for a client.
    public static func inflater(_ format: CompressionFormat) -> Inflater {
        switch format {
        case .gzip: gzipInflater.value
        case .zlib: zlibInflater.value
        default: rawInflater.value
        }
    }

    private static let rawDeflater = ThreadLocal { Deflater(windowBits: 15, memoryLevel: 8) }
    private static let gzipDeflater = ThreadLocal { Deflater(windowBits: 15, memoryLevel: 8, format: .gzip) }
    private static let zlibDeflater = ThreadLocal { Deflater(windowBits: 15, memoryLevel: 8, format: .zlib) }
    private static let rawInflater = ThreadLocal { Inflater() }
    private static let gzipInflater = ThreadLocal { Inflater(format: .gzip) }
    private static let zlibInflater = ThreadLocal { Inflater(format: .zlib) }
}
