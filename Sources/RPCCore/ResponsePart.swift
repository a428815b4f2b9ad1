/// One message of a response, encoded, as its handler hands it over: the protobuf bytes, or
/// those bytes compressed with the call's `MessageCompression` (the wire says which).
public struct ResponseMessage: Sendable {
    public var bytes: [UInt8]
    public var compressed: Bool

    public init(bytes: [UInt8], compressed: Bool = false) {
        self.bytes = bytes
        self.compressed = compressed
    }
}

/// What a handler hands its connection, typed, whichever wire carries the call: each wire
/// encodes these once (a REPLY or MESSAGE or TRAILERS frame; HTTP/2 headers, a length-prefixed
/// message, trailers), and no wire reads another's frames.
///
/// As grpc-swift 2's `RPCResponsePart`, less the response metadata, which no method sends.
public enum ResponsePart: Sendable {
    /// A unary call's answer: its one message, and the call ends OK.
    case reply(ResponseMessage)
    /// One message of a server stream.
    case message(ResponseMessage)
    /// The call's end: OK (nil) for a stream, or the error, with its `ERR_…` code, details and
    /// cause (which stays on this side).
    case end(RPCError?)
    /// The call was refused before its handler ran (its request did not inflate or decode): our
    /// protocol answers with a REPLY even for a stream, as for any refusal.
    case refused(RPCError)

    /// True when the part ends the call.
    public var isFinal: Bool {
        if case .message = self { return false }
        return true
    }
}

/// A response part on its way from a handler's thread to its connection's loop.
public struct OutgoingPart: Sendable {
    public let streamID: UInt32
    public let part: ResponsePart

    public init(streamID: UInt32, _ part: ResponsePart) {
        self.streamID = streamID
        self.part = part
    }

    /// About the bytes it adds to the connection's output: its message and a frame's header.
    public var wireSize: Int {
        switch part {
        case .reply(let message), .message(let message): message.bytes.count + FrameHeader.size
        case .end, .refused: 64
        }
    }
}

/// Appends a response message's encoding to the buffer given (compressed when the call's
/// `MessageCompression` asks and it pays) and says whether it compressed it: how a handler that
/// completes on its connection's loop writes its message straight into the wire's output.
public typealias MessageWriter = (inout [UInt8]) -> Bool
