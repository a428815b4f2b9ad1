public import ProtoBridge
public import RPCMessages
internal import ThreadSupport

/// Appends complete frames (header and payload) to an output buffer.
///
/// Bodies are encoded straight into the buffer after a placeholder header whose length is patched
/// afterwards, so a reply costs no intermediate copy.
public enum FrameWriter {
    /// Unary bodies at least this large are deflated when the peer accepts deflate.
    public static let compressionThreshold = MessageCompression.threshold

    private static let unaryDeflater = ThreadLocal { Deflater(windowBits: 15, memoryLevel: 8) }

    /// HELLO (client → server).
    public static func hello(_ hello: Hello, into buffer: inout [UInt8]) {
        message(hello, type: .hello, streamID: 0, into: &buffer)
    }

    /// HELLO_ACK (server → client).
    public static func helloAck(_ ack: HelloAck, into buffer: inout [UInt8]) {
        message(ack, type: .helloAck, streamID: 0, into: &buffer)
    }

    /// GOAWAY (server → client).
    public static func goaway(lastStreamID: UInt32, error: RPCError, into buffer: inout [UInt8]) {
        message(Goaway(lastStreamID: lastStreamID, status: error.status), type: .goaway, streamID: 0, into: &buffer)
    }

    /// PING or PONG with 8 opaque bytes.
    public static func ping(_ type: FrameType, payload: UnsafeRawBufferPointer, into buffer: inout [UInt8]) {
        FrameHeader(length: UInt32(payload.count), type: type, streamID: 0).write(to: &buffer)
        buffer.append(contentsOf: payload)
    }

    /// CANCEL (client → server).
    public static func cancel(streamID: UInt32, into buffer: inout [UInt8]) {
        FrameHeader(length: 0, type: .cancel, streamID: streamID).write(to: &buffer)
    }

    /// CALL: u32 header length, CallHeader, request body (deflated when `compress`).
    /// - Returns: the sizes of its header and body, for the client to hold against HELLO_ACK's limits.
    @discardableResult
    public static func call<Request: ProtoMessage>(
        streamID: UInt32, header: CallHeader, request: Request, compress: Bool = false, into buffer: inout [UInt8]
    ) -> CallSizes {
        let start = beginFrame(.call, streamID: streamID, into: &buffer)
        let headerLength = appendCallHeader(header, into: &buffer)
        let body = appendBody(request, compress: compress, into: &buffer)
        endFrame(start, compressed: body.compressed, into: &buffer)
        return CallSizes(headerBytes: headerLength, bodyBytes: body.bytes)
    }

    /// CALL with an already-encoded request body (for tools that build bodies dynamically).
    /// - Returns: the sizes of its header and body, for the client to hold against HELLO_ACK's limits.
    @discardableResult
    public static func call(
        streamID: UInt32, header: CallHeader, body: UnsafeRawBufferPointer, into buffer: inout [UInt8]
    ) -> CallSizes {
        let start = beginFrame(.call, streamID: streamID, into: &buffer)
        let headerLength = appendCallHeader(header, into: &buffer)
        buffer.append(contentsOf: body)
        endFrame(start, compressed: false, into: &buffer)
        return CallSizes(headerBytes: headerLength, bodyBytes: body.count)
    }

    /// REPLY with status OK and `message` as body, its COMPRESSED flag as the message says.
    public static func reply(streamID: UInt32, message: ResponseMessage, into buffer: inout [UInt8]) {
        FrameHeader(
            length: UInt32(4 + message.bytes.count), type: .reply,
            flags: message.compressed ? FrameHeader.compressedFlag : 0, streamID: streamID
        ).write(to: &buffer)
        BigEndian.append(0, to: &buffer) // an OK Status encodes to zero bytes
        buffer.append(contentsOf: message.bytes)
    }

    /// REPLY with status OK whose body `write` appends in place (and says whether it compressed).
    public static func reply(streamID: UInt32, into buffer: inout [UInt8], _ write: MessageWriter) {
        let start = beginFrame(.reply, streamID: streamID, into: &buffer)
        BigEndian.append(0, to: &buffer)
        let compressed = write(&buffer)
        endFrame(start, compressed: compressed, into: &buffer)
    }

    /// REPLY carrying an error status and no body.
    public static func reply(streamID: UInt32, error: RPCError, into buffer: inout [UInt8]) {
        let start = beginFrame(.reply, streamID: streamID, into: &buffer)
        let lengthAt = buffer.count
        BigEndian.append(0, to: &buffer)
        let statusLength = error.status.encode(appendingTo: &buffer)
        BigEndian.store(UInt32(statusLength), in: &buffer, at: lengthAt)
        endFrame(start, compressed: false, into: &buffer)
    }

    /// MESSAGE of a server stream, its COMPRESSED flag as the message says.
    public static func streamMessage(streamID: UInt32, message: ResponseMessage, into buffer: inout [UInt8]) {
        FrameHeader(
            length: UInt32(message.bytes.count), type: .message,
            flags: message.compressed ? FrameHeader.compressedFlag : 0, streamID: streamID
        ).write(to: &buffer)
        buffer.append(contentsOf: message.bytes)
    }

    /// MESSAGE of a server stream from an encoded message.
    public static func streamMessage(
        streamID: UInt32, encoded body: [UInt8], deflater: Deflater?, into buffer: inout [UInt8]
    ) {
        guard let deflater, body.count >= streamCompressionThreshold else {
            // The length is known: the header is written whole, not patched afterwards.
            FrameHeader(length: UInt32(body.count), type: .message, streamID: streamID).write(to: &buffer)
            buffer.append(contentsOf: body)
            return
        }
        let start = beginFrame(.message, streamID: streamID, into: &buffer)
        body.withUnsafeBytes { deflater.compressStreamMessage($0, appendingTo: &buffer) }
        endFrame(start, compressed: true, into: &buffer)
    }

    /// Stream messages smaller than this go uncompressed even on a compressed stream.
    public static let streamCompressionThreshold = StreamWriter.compressionThreshold

    /// TRAILERS ending a server stream.
    public static func trailers(streamID: UInt32, status: Status, into buffer: inout [UInt8]) {
        message(status, type: .trailers, streamID: streamID, into: &buffer)
    }

    // MARK: Helpers

    private static func message<M: ProtoMessage>(
        _ message: M, type: FrameType, streamID: UInt32, into buffer: inout [UInt8]
    ) {
        let start = beginFrame(type, streamID: streamID, into: &buffer)
        message.encode(appendingTo: &buffer)
        endFrame(start, compressed: false, into: &buffer)
    }

    /// CALL's header after its u32 length; returns the header's length.
    private static func appendCallHeader(_ header: CallHeader, into buffer: inout [UInt8]) -> Int {
        let lengthAt = buffer.count
        BigEndian.append(0, to: &buffer)
        let headerLength = header.encode(appendingTo: &buffer)
        BigEndian.store(UInt32(headerLength), in: &buffer, at: lengthAt)
        return headerLength
    }

    private static func beginFrame(_ type: FrameType, streamID: UInt32, into buffer: inout [UInt8]) -> Int {
        let start = buffer.count
        FrameHeader(length: 0, type: type, streamID: streamID).write(to: &buffer)
        return start
    }

    private static func endFrame(_ start: Int, compressed: Bool, into buffer: inout [UInt8]) {
        BigEndian.store(UInt32(buffer.count - start - FrameHeader.size), in: &buffer, at: start)
        if compressed { buffer[start + 5] = FrameHeader.compressedFlag }
    }

    /// Appends the body, deflated when asked and worth it; returns whether it was deflated.
    /// Appends `body`'s encoding, deflated when `compress` and that makes it smaller.
    /// - Returns: whether it was deflated, and its size before deflating.
    private static func appendBody<M: ProtoMessage>(_ body: M, compress: Bool, into buffer: inout [UInt8]) -> (
        compressed: Bool, bytes: Int
    ) {
        guard compress else { return (false, body.encode(appendingTo: &buffer)) }
        var raw: [UInt8] = []
        body.encode(appendingTo: &raw)
        guard raw.count >= compressionThreshold else {
            buffer.append(contentsOf: raw)
            return (false, raw.count)
        }
        let start = buffer.count
        raw.withUnsafeBytes { unaryDeflater.value.compressIndependent($0, appendingTo: &buffer) }
        if buffer.count - start >= raw.count {
            buffer.removeLast(buffer.count - start)
            buffer.append(contentsOf: raw)
            return (false, raw.count)
        }
        return (true, raw.count)
    }
}
