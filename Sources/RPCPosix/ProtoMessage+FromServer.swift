import ProtoBridge
import RPCCore

extension ProtoMessage {
    /// Decodes a message the server sent (HELLO_ACK, GOAWAY, a status, a response).
    /// - Throws: INVALID_ARGUMENT naming the message type, the decoding error as its cause.
    init(fromServer bytes: [UInt8]) throws(RPCError) {
        do {
            self = try Self(serializedBytes: bytes)
        } catch {
            throw RPCError.invalidArgument("the server sent an \(error.description)").caused(by: error)
        }
    }
}
