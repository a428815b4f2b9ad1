internal import Moderation
internal import ModerationRPC

/// Actions as webhook bodies carry them: the proto3 JSON of `moderation.v1.Action`, as any
/// protobuf library prints it (camelCase names, enums by name, 64-bit integers as strings), from
/// the message's generated JSON encoder.
enum ActionJSON {
    static func json(of record: ActionRecord) -> [UInt8] {
        ModerationRPC.actionJSON(record)
    }
}
