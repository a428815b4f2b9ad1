/// A frame on its way from a handler's thread to its connection's loop.
public enum OutgoingFrame: Sendable {
    /// A whole frame, encoded: a reply, trailers, a compressed stream message.
    case frame(streamID: UInt32, bytes: [UInt8], final: Bool)
    /// One uncompressed message of a server stream: its encoding only, which a fan-out shares
    /// between every stream it goes to; the 12-byte header is written on the loop, straight into
    /// the connection's output.
    case message(streamID: UInt32, body: [UInt8])

    public var streamID: UInt32 {
        switch self {
        case .frame(let streamID, _, _), .message(let streamID, _): streamID
        }
    }

    /// Bytes it adds to the connection's output.
    public var wireSize: Int {
        switch self {
        case .frame(_, let bytes, _): bytes.count
        case .message(_, let body): FrameHeader.size + body.count
        }
    }

    /// The whole frame, for a session that takes frames only.
    public var encoded: (bytes: [UInt8], final: Bool) {
        switch self {
        case .frame(_, let bytes, let final):
            return (bytes, final)
        case .message(let streamID, let body):
            var bytes: [UInt8] = []
            bytes.reserveCapacity(FrameHeader.size + body.count)
            FrameWriter.streamMessage(streamID: streamID, encoded: body, deflater: nil, into: &bytes)
            return (bytes, false)
        }
    }
}
