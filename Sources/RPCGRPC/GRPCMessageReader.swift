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

    /// A whole message as the client sent it (inflating is the caller's, per `grpc-encoding`).
    public struct Message: Equatable, Sendable {
        public var compressed: Bool
        public var bytes: [UInt8]
    }

    /// Appends `bytes` and returns the messages they complete, in order.
    /// - Throws: RESOURCE_EXHAUSTED `ERR_MESSAGE_TOO_LARGE` for a message announced over `limit`;
    ///   INVALID_ARGUMENT `ERR_PROTOCOL` for a compressed-flag byte other than 0 or 1.
    public mutating func append(_ bytes: [UInt8], limit: Int) throws(RPCError) -> [Message] {
        if pending.isEmpty {
            pending = bytes
        } else {
            pending.append(contentsOf: bytes)
        }
        var messages: [Message] = []
        var offset = 0
        while pending.count - offset >= 5 {
            let flag = pending[offset]
            guard flag <= 1 else {
                throw .protocolViolation("a gRPC message's compressed flag is \(flag); it must be 0 or 1")
            }
            let length =
                Int(pending[offset + 1]) << 24 | Int(pending[offset + 2]) << 16 | Int(pending[offset + 3]) << 8
                | Int(pending[offset + 4])
            guard length <= limit else {
                throw .messageTooLarge("a \(side) message of \(length) bytes exceeds the limit of \(limit) bytes")
            }
            guard pending.count - offset - 5 >= length else { break }
            messages.append(Message(compressed: flag == 1, bytes: Array(pending[offset + 5..<offset + 5 + length])))
            offset += 5 + length
        }
        if offset == pending.count {
            pending = []
        } else if offset > 0 {
            pending.removeFirst(offset)
        }
        return messages
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
