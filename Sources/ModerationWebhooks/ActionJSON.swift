internal import Moderation
internal import ModerationMessages
internal import ModerationRPC
internal import ProtoSchema

/// Actions as webhook bodies carry them: the proto3 JSON of `moderation.v1.Action`, as any
/// protobuf library prints it (camelCase names, enums by name, 64-bit integers as strings).
struct ActionJSON: Sendable {
    private let action: MessageDescriptor

    init() {
        do {
            let schema = try Schema(fileDescriptorSet: ModerationSchema.fileDescriptorSet)
            action = try schema.requireMessage(named: "moderation.v1.Action")
        } catch {
            // The descriptor set is built in: failing to read it is a build's bug.
            preconditionFailure("the built-in moderation schema does not read: \(error)")
        }
    }

    func json(of record: ActionRecord) -> String {
        let bytes = ModerationRPC.encodeAction(record)
        do {
            return try DynamicMessage(serializedBytes: bytes, as: action).jsonString()
        } catch {
            preconditionFailure("an action's own encoding does not decode: \(error)")
        }
    }
}
