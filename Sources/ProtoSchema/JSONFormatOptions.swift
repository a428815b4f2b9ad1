/// How `DynamicMessage.jsonString(options:)` prints a message.
///
/// The defaults give proto3's canonical JSON, compact; `rpc-probe` turns on `pretty` for people
/// and `emitDefaults` for its `--emit-defaults` flag (grpcurl's).
public struct JSONFormatOptions: Sendable, Hashable {
    /// Print every field, even unset ones: zero scalars, `[]`, `{}`, and `null` for unset
    /// sub-messages. Members of a oneof and proto3 `optional` fields, whose absence means
    /// something, are printed only when set (as protobuf's own `EmitUnpopulated` does).
    public var emitDefaults: Bool
    /// Indent nested values by two spaces, one member per line; otherwise no whitespace at all.
    public var pretty: Bool
    /// Use the .proto field names ("joined_at") instead of the JSON names ("joinedAt").
    public var preserveProtoFieldNames: Bool

    public init(emitDefaults: Bool = false, pretty: Bool = false, preserveProtoFieldNames: Bool = false) {
        self.emitDefaults = emitDefaults
        self.pretty = pretty
        self.preserveProtoFieldNames = preserveProtoFieldNames
    }
}
