/// One named value of an enum type.
///
/// A plain value: enum values are looked up to print or parse names, never navigated from.
public struct EnumValueDescriptor: Sendable, Hashable {
    /// The value's name, e.g. "SCOPE_ADMIN".
    public let name: String
    /// The value's number.
    public let number: Int32
    /// The comment written before the value, without the `//` markers.
    public let leadingComments: String?
}
