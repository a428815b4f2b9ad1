import FuzzSupport
import ProtoBridge
import RPCCore
import RPCMessages

/// Walks what a server session wrote and checks each whole frame is one a client can read: a
/// server frame type, no reserved bits, and a payload that decodes as its type says.
struct OutputChecker {
    let bytes: [UInt8]
    /// Bytes of whole frames checked; the rest is an incomplete frame.
    private(set) var consumed = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func check() {
        bytes.withUnsafeBytes { raw in
            while raw.count - consumed >= FrameHeader.size {
                let (header, reserved) = FrameHeader.read(
                    from: UnsafeRawBufferPointer(rebasing: raw[consumed..<consumed + FrameHeader.size]))
                let total = FrameHeader.size + Int(header.length)
                guard raw.count - consumed >= total else { return }
                fuzzCheck(reserved == 0, "server frame \(header.type) has reserved bits \(reserved)")
                let payload = UnsafeRawBufferPointer(rebasing: raw[consumed + FrameHeader.size..<consumed + total])
                checkFrame(header, payload)
                consumed += total
            }
        }
    }

    private func checkFrame(_ header: FrameHeader, _ payload: UnsafeRawBufferPointer) {
        let compressedAllowed = header.type == .reply || header.type == .message
        fuzzCheck(!header.isCompressed || compressedAllowed, "server frame \(header.type) is compressed")
        switch header.type {
        case .helloAck:
            decodes(HelloAck.self, payload, header)
        case .goaway:
            decodes(Goaway.self, payload, header)
        case .trailers:
            decodes(Status.self, payload, header)
        case .reply:
            fuzzCheck(payload.count >= 4, "REPLY of \(payload.count) bytes has no status length")
            let length = Int(BigEndian.readUInt32(payload))
            fuzzCheck(length <= payload.count - 4, "REPLY status length \(length) runs past its \(payload.count) bytes")
            decodes(Status.self, UnsafeRawBufferPointer(rebasing: payload[4..<4 + length]), header)
        case .message:
            fuzzCheck(header.streamID != 0, "MESSAGE on stream 0")
        case .ping, .pong:
            fuzzCheck(
                payload.count == 8 && header.streamID == 0,
                "\(header.type) of \(payload.count) bytes on stream \(header.streamID)")
        default:
            fuzzCheck(false, "the server wrote a \(header.type) frame")
        }
    }

    private func decodes<Message: ProtoMessage>(
        _ type: Message.Type, _ payload: UnsafeRawBufferPointer, _ header: FrameHeader
    ) {
        do {
            _ = try Message(serializedBytes: payload)
        } catch {
            fuzzCheck(
                false,
                "server frame \(header.type) on stream \(header.streamID) carries an invalid \(Message.protoName): \(error)"
            )
        }
    }
}
