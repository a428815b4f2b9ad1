public import ProtoBridge
import RPCMessages

/// A unary call's outcome kept as bytes, so that a retry with the same idempotency key gets the
/// first call's reply to the byte, on whichever wire it comes.
///
/// The bytes are a REPLY frame's payload, uncompressed (a big-endian u32 status length, the
/// `Status`, and the response when the status is OK), the form stores have kept since
/// idempotency keys existed; each wire answers a replay from the `ResponsePart` they decode to.
public enum RecordedReply {
    /// The bytes to keep for `result`.
    public static func encode<Response: ProtoMessage>(_ result: Result<Response, RPCError>) -> [UInt8] {
        var payload: [UInt8] = []
        switch result {
        case .success(let response):
            BigEndian.append(0, to: &payload)
            response.encode(appendingTo: &payload)
        case .failure(let error):
            BigEndian.append(0, to: &payload)
            let length = error.status.encode(appendingTo: &payload)
            BigEndian.store(UInt32(length), in: &payload, at: 0)
        }
        return payload
    }

    /// What `payload` answers: the recorded response, or the recorded error (a payload that does
    /// not decode is an INTERNAL error: the store gave back something it was not given).
    public static func part(of payload: [UInt8]) -> ResponsePart {
        guard payload.count >= 4 else { return .end(.internal("a recorded reply is shorter than its status length")) }
        let length = payload.withUnsafeBytes { Int(BigEndian.readUInt32($0)) }
        guard length <= payload.count - 4 else { return .end(.internal("a recorded reply's status is cut short")) }
        guard length > 0 else { return .reply(ResponseMessage(bytes: Array(payload[4...]))) }
        guard let status = try? Status(serializedBytes: payload[4..<4 + length]) else {
            return .end(.internal("a recorded reply's status does not decode"))
        }
        return .end(RPCError(status: status))
    }
}
