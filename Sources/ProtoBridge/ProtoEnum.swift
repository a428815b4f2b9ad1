/// A Swift enum generated from a proto3 enum.
///
/// proto3 enums are open: a value this build does not know is kept as `unrecognized(Int32)` and
/// sent back unchanged, never dropped or turned into an error.
public protocol ProtoEnum: Sendable, Hashable {
    /// The enum's fully-qualified proto name, e.g. "moderation.v1.Scope".
    static var protoName: String { get }
    /// Every known value, in declaration order.
    static var allKnown: [Self] { get }
    /// The value for a wire number; unknown numbers become `unrecognized`.
    init(rawValue: Int32)
    /// The wire number.
    var rawValue: Int32 { get }
    /// The value's name in the .proto, or nil when unrecognized.
    var protoValueName: String? { get }
}

extension ProtoEnum {
    /// The known value with this proto name (e.g. "SCOPE_ADMIN"), if any.
    public init?(protoValueName name: String) {
        guard let value = Self.allKnown.first(where: { $0.protoValueName == name }) else { return nil }
        self = value
    }
}
