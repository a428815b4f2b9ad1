/// One header field of a header block, as received or to send.
///
/// The name is text (HTTP/2 names are lowercase tokens; pseudo-headers such as `:path` included);
/// the value is bytes, because values are octets that need not be UTF-8 — a `-bin` header's
/// base64 text is passed through untouched, decoding it is the caller's business.
public struct HTTP2Header: Sendable, Hashable {
    /// The field name, lowercase as on the wire.
    public var name: String
    /// The field value's octets.
    public var value: [UInt8]

    /// A field with a byte value.
    public init(name: String, value: [UInt8]) {
        self.name = name
        self.value = value
    }

    /// A field with a text value (stored as its UTF-8).
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = Array(value.utf8)
    }

    /// The value read as UTF-8 (invalid sequences replaced), for fields known to be text.
    public var stringValue: String { String(decoding: value, as: UTF8.self) }
}

extension Collection<HTTP2Header> {
    /// The value of the first field called `name`, as text: a convenience for pseudo-headers and
    /// other fields that appear once.
    public func first(named name: String) -> String? {
        first { $0.name == name }?.stringValue
    }
}
