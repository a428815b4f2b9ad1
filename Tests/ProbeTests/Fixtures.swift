import ModerationMessages
import ProtoBridge
import ProtoSchema
import RPCMessages
import TestSupport

/// The schema the server reflects (the same embedded descriptor sets), parsed once.
let servedSchema = Result { () throws(ProtoSchemaError) in
    try Schema(fileDescriptorSets: [RPCSchema.fileDescriptorSet, ModerationSchema.fileDescriptorSet])
}

/// "moderation.v1.Moderation/NAME", as a user types a method.
func moderation(_ name: String) -> String { "moderation.v1.Moderation/\(name)" }

/// Reads JSON rpc-probe printed as a generated message type — through the descriptor-driven
/// decoder and the wire — so that a test compares typed values, and a response that is not valid
/// proto3 JSON of its type fails.
func message<M: ProtoMessage>(_ type: M.Type, fromJSON text: String) throws -> M {
    let descriptor = try servedSchema.get().requireMessage(named: M.protoName)
    return try M(serializedBytes: DynamicMessage(jsonString: text, as: descriptor).serializedBytes())
}

extension ChildProcess.Outcome {
    /// True for exit code 0 with nothing on standard error.
    var isCleanSuccess: Bool { exitCode == 0 && signal == nil && standardError.isEmpty }
}
