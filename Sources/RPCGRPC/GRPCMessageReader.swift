public import RPCCore

/// Reassembles gRPC's length-prefixed messages (requests on the server, responses in rpc-probe) (a compressed-flag byte, a big-endian u32 length,
/// the message) from a stream's DATA frames, which split and join messages as they please.
///
/// The length is checked against the limit as soon as the prefix has arrived, so a client that
/// announces a message over the limit is refused before the server buffers it.
public struct GRPCMessageReader {
    /// Bytes received that do not yet make a whole message.
    public private(set) var pending: [UInt8] = []

    /// What a too-large message is called in the error ("request" on the server, "response" in a client).
    public var side = "request"

    public init(side: String = "request") { self.side = side }

    /// A whole message as the peer sent it (inflating is the caller's, per `grpc-encoding`).
    public struct Message: Equatable, Sendable {
        public var compressed: Bool
        /// The message's bytes: a slice of what was received, not a copy.
        public var bytes: ArraySlice<UInt8>

        public init(compressed: Bool, bytes: ArraySlice<UInt8>) {
            self.compressed = compressed
            self.bytes = bytes
        }
    }

    /// Appends `bytes` and returns the messages they complete, in order.
    /// - Throws: RESOURCE_EXHAUSTED `ERR_MESSAGE_TOO_LARGE` for a message announced over `limit`;
    ///   INVALID_ARGUMENT `ERR_PROTOCOL` for a compressed-flag byte other than 0 or 1.
    public mutating func append(_ bytes: [UInt8], limit: Int) throws(RPCError) -> [Message] {
        var messages: [Message] = []
        try append(bytes, limit: limit) { messages.append($0) }
        return messages
    }

    /// Appends `bytes` and hands each message they complete to `body`, in order, with no array
    /// made for them: the common request, one whole message in one DATA frame, is a slice of that
    /// frame's bytes, and only an incomplete tail is copied to wait for the rest.
    public mutating func append(
        _ bytes: [UInt8], limit: Int, _ body: (Message) throws(RPCError) -> Void
    ) throws(RPCError) {
        let buffer: [UInt8]
        if pending.isEmpty {
            buffer = bytes
        } else {
            pending.append(contentsOf: bytes)
            buffer = pending
        }
        var offset = 0
        while buffer.count - offset >= 5 {
            let flag = buffer[offset]
            guard flag <= 1 else {
                throw .protocolViolation("a gRPC message's compressed flag is \(flag); it must be 0 or 1")
            }
            let length =
                Int(buffer[offset + 1]) << 24 | Int(buffer[offset + 2]) << 16 | Int(buffer[offset + 3]) << 8
                | Int(buffer[offset + 4])
            guard length <= limit else {
                throw .messageTooLarge("a \(side) message of \(length) bytes exceeds the limit of \(limit) bytes")
            }
            guard buffer.count - offset - 5 >= length else { break }
            try body(Message(compressed: flag == 1, bytes: buffer[offset + 5..<offset + 5 + length]))
            offset += 5 + length
        }
        if offset == buffer.count {
            pending = []
        } else if offset > 0 {
            pending = Array(buffer[offset...])
        } else if pending.isEmpty {
            pending = bytes // the first part of a message: kept as it came, not copied
        } // else `pending` already holds it all, and grows in place as the rest arrives
    }

    /// The one whole message `bytes` hold exactly (its 5-byte prefix, then that many bytes), read
    /// in place; nil when they hold anything else (part of one, several).
    /// - Throws: as `append` does, for a bad flag or a length over `limit`.
    public static func single(
        in bytes: UnsafeRawBufferPointer, limit: Int
    ) throws(RPCError) -> (compressed: Bool, body: UnsafeRawBufferPointer)? {
        guard bytes.count >= 5 else { return nil }
        let flag = bytes[0]
        guard flag <= 1 else {
            throw .protocolViolation("a gRPC message's compressed flag is \(flag); it must be 0 or 1")
        }
        let length = Int(bytes[1]) << 24 | Int(bytes[2]) << 16 | Int(bytes[3]) << 8 | Int(bytes[4])
        guard length <= limit else {
            throw .messageTooLarge("a request message of \(length) bytes exceeds the limit of \(limit) bytes")
        }
        guard bytes.count == 5 + length else { return nil }
        return (flag == 1, UnsafeRawBufferPointer(rebasing: bytes[5...]))
    }

    /// Frames `message` for the wire: the flag byte, the length, the bytes.
    public static func frame(_ message: [UInt8], compressed: Bool) -> [UInt8] {
        message.withUnsafeBytes { frame($0, compressed: compressed) }
    }

    /// `frame` over bytes in place (a handler's reply inside its frame of our protocol).
    public static func frame(_ message: UnsafeRawBufferPointer, compressed: Bool) -> [UInt8] {
        let length = message.count
        return [UInt8](unsafeUninitializedCapacity: length + 5) { buffer, initialized in
            buffer[0] = compressed ? 1 : 0
            buffer[1] = UInt8(truncatingIfNeeded: length >> 24)
            buffer[2] = UInt8(truncatingIfNeeded: length >> 16)
            buffer[3] = UInt8(truncatingIfNeeded: length >> 8)
            buffer[4] = UInt8(truncatingIfNeeded: length)
            if length > 0 {
                UnsafeMutableRawBufferPointer(start: buffer.baseAddress! + 5, count: length).copyMemory(from: message)
            }
            initialized = length + 5
        }
    }
}
