/// A cursor over protobuf wire bytes that accepts and refuses exactly what protobuf-c 1.4.1's
/// unpack does, for the few messages that decode themselves in Swift on a hot path
/// (`ProtoMessage.decoded(from:)`), so that either way of decoding a message gives the same answer.
///
/// protobuf-c's rules, which are narrower or wider than the protobuf spec's in places:
/// - a key is a varint of at most 5 bytes whose field number (the bits above the wire type) may
///   take all 32 bits; a field number no message declares is an unknown field, and so is 0 in a
///   key of two bytes or more (a one-byte key of field 0 is refused);
/// - wire types 3 and 4 (groups) and 6 and 7 are refused, even in unknown fields;
/// - a varint is at most 10 bytes, a length prefix at most 5 and never past the input's end;
/// - a declared field with another wire type than its own is refused (the caller checks this).
///
/// Every read checks the remaining length first: hostile input is a thrown `Malformed`, never
/// an out-of-bounds access. The caller turns it into `ProtoDecodingError.invalidEncoding(of:)`,
/// which is what protobuf-c's failure becomes.
public struct ProtoWireScanner {
    /// The bytes are not an encoding protobuf-c accepts.
    public struct Malformed: Error {
        @inlinable
        public init() {}
    }

    /// The wire types protobuf-c reads.
    public enum WireType: UInt8 {
        case varint = 0
        case fixed64 = 1
        case lengthDelimited = 2
        case fixed32 = 5
    }

    @usableFromInline let bytes: UnsafeRawBufferPointer
    @usableFromInline var offset = 0

    @inlinable
    public init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    @inlinable
    public var isAtEnd: Bool { offset >= bytes.count }

    /// Reads a field's key: its number and wire type.
    @inlinable
    public mutating func key() throws(Malformed) -> (field: UInt32, wireType: WireType) {
        let first = try nextByte()
        // protobuf-c refuses a one-byte key of field 0 (and lets a longer one through).
        guard first & 0xF8 != 0, let wireType = WireType(rawValue: first & 7) else { throw Malformed() }
        var field = UInt32(first & 0x7F) >> 3
        if first < 0x80 { return (field, wireType) }
        var shift: UInt32 = 4
        for _ in 1..<5 {
            let byte = try nextByte()
            field |= UInt32(byte & 0x7F) << shift
            if byte < 0x80 { return (field, wireType) }
            shift += 7
        }
        throw Malformed()
    }

    /// Reads a length prefix and returns the bytes it covers (a view into the same buffer).
    @inlinable
    public mutating func lengthDelimited() throws(Malformed) -> UnsafeRawBufferPointer {
        var length = 0
        var shift = 0
        for index in 0..<5 {
            let byte = try nextByte()
            length |= Int(byte & 0x7F) << shift
            if byte < 0x80 { break }
            guard index < 4 else { throw Malformed() }
            shift += 7
        }
        guard length <= bytes.count - offset else { throw Malformed() }
        let start = offset
        offset += length
        return UnsafeRawBufferPointer(rebasing: bytes[start..<offset])
    }

    /// Skips the value of a field the caller does not read.
    @inlinable
    public mutating func skip(_ wireType: WireType) throws(Malformed) {
        switch wireType {
        case .varint:
            for _ in 0..<10 {
                if try nextByte() < 0x80 { return }
            }
            throw Malformed()
        case .fixed64: try advance(8)
        case .fixed32: try advance(4)
        case .lengthDelimited: _ = try lengthDelimited()
        }
    }

    /// The Swift string of a `string` field's bytes, checked as the bridge checks protobuf-c's
    /// (`ProtoArena.string`): no NUL, then valid UTF-8, each failure naming the field.
    public static func string(
        _ bytes: UnsafeRawBufferPointer, field: String, of message: String
    ) throws(ProtoDecodingError) -> String {
        var ascii = true
        for byte in bytes {
            if byte == 0 { throw .containsNUL(field: field, of: message) }
            if byte >= 0x80 { ascii = false }
        }
        if ascii {
            // ASCII is valid UTF-8, so nothing is repaired; this is the cheapest way to a String.
            return String(unsafeUninitializedCapacity: bytes.count) { buffer in
                buffer.initialize(from: bytes).index
            }
        }
        guard let string = String(validating: bytes, as: UTF8.self) else {
            throw .invalidUTF8(field: field, of: message)
        }
        return string
    }

    @inlinable
    mutating func nextByte() throws(Malformed) -> UInt8 {
        guard offset < bytes.count else { throw Malformed() }
        defer { offset += 1 }
        return bytes[offset]
    }

    @inlinable
    mutating func advance(_ count: Int) throws(Malformed) {
        guard count <= bytes.count - offset else { throw Malformed() }
        offset += count
    }
}
