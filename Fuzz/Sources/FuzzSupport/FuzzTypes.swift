import ModerationMessages
public import ProtoBridge
import RPCMessages

/// The message types the fuzzers choose from with an input's first byte.
///
/// Sorted by proto name, not in generation order, so that the seed generator (`tools/fuzz-seeds`,
/// in Python) can compute the same index for a type without reading Swift.
public enum FuzzTypes {
    /// Every message type of both schemas, sorted by `protoName`.
    public static let all: [any ProtoMessage.Type] =
        (RPCSchema.messageTypes + ModerationSchema.messageTypes).sorted { $0.protoName < $1.protoName }

    /// The type an input's first byte selects.
    public static func type(selectedBy byte: UInt8) -> any ProtoMessage.Type {
        all[Int(byte) % all.count]
    }
}
