import ByteCoding

/// A cursor over protobuf wire bytes that never reads past its end.
///
/// Both the descriptor-set parser and the dynamic-message decoder read untrusted bytes with it;
/// every read checks the remaining length first, so hostile input is a thrown `Failure` (which
/// the caller turns into an error naming the message and field), never an out-of-bounds access.
struct WireReader {
    /// Why a read failed, without context; callers add the message type and field.
    struct Failure: Error {
        var reason: String
    }

    /// The wire types of the protobuf encoding.
    enum WireType: UInt8 {
        case varint = 0
        case fixed64 = 1
        case lengthDelimited = 2
        case startGroup = 3
        case endGroup = 4
        case fixed32 = 5

        var name: String {
            switch self {
            case .varint: "varint"
            case .fixed64: "64-bit"
            case .lengthDelimited: "length-delimited"
            case .startGroup: "start-group"
            case .endGroup: "end-group"
            case .fixed32: "32-bit"
            }
        }
    }

    /// The largest field number protobuf allows (2^29 - 1).
    static let maximumFieldNumber: UInt64 = (1 << 29) - 1

    private let bytes: UnsafeRawBufferPointer
    private(set) var offset: Int

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        self.offset = 0
    }

    var isAtEnd: Bool { offset >= bytes.count }

    /// Reads a base-128 varint of at most 10 bytes.
    mutating func varint() throws(Failure) -> UInt64 {
        do throws(Varint.Failure) {
            return try Varint.read(from: bytes, at: &offset)
        } catch {
            switch error {
            case .truncated: throw Failure(reason: "truncated varint")
            case .overflow: throw Failure(reason: "varint longer than 64 bits")
            }
        }
    }

    /// Reads a field key: its number (1 ... 2^29-1) and wire type.
    mutating func tag() throws(Failure) -> (number: Int32, wireType: WireType) {
        let key = try varint()
        let number = key >> 3
        guard number >= 1, number <= Self.maximumFieldNumber else {
            throw Failure(reason: "invalid field number \(number)")
        }
        guard let wireType = WireType(rawValue: UInt8(key & 7)) else {
            throw Failure(reason: "invalid wire type \(key & 7) for field number \(number)")
        }
        return (Int32(number), wireType)
    }

    /// Reads 4 little-endian bytes.
    mutating func fixed32() throws(Failure) -> UInt32 { try littleEndian() }

    /// Reads 8 little-endian bytes.
    mutating func fixed64() throws(Failure) -> UInt64 { try littleEndian() }

    /// Reads a fixed-width value's bytes, least significant first.
    private mutating func littleEndian<Value: FixedWidthInteger & UnsignedInteger>() throws(Failure) -> Value {
        let size = Value.bitWidth / 8
        guard bytes.count - offset >= size else { throw Failure(reason: "truncated \(Value.bitWidth)-bit value") }
        var value: Value = 0
        for i in 0..<size { value |= Value(bytes[offset + i]) << (8 * i) }
        offset += size
        return value
    }

    /// Reads a length prefix and returns the bytes it covers (a view into the same buffer).
    mutating func lengthDelimited() throws(Failure) -> UnsafeRawBufferPointer {
        let length = try varint()
        guard length <= UInt64(bytes.count - offset) else {
            throw Failure(
                reason: "length \(length) runs past the end of the input (\(bytes.count - offset) bytes left)")
        }
        let start = offset
        offset += Int(length)
        return UnsafeRawBufferPointer(rebasing: bytes[start..<offset])
    }

    /// Skips the value of a field this reader's caller does not know.
    ///
    /// Groups (wire types 3 and 4, proto2's deprecated encoding) are skipped up to their matching
    /// end-group key, nesting at most `depth` levels.
    mutating func skip(_ wireType: WireType, number: Int32, depth: Int) throws(Failure) {
        switch wireType {
        case .varint: _ = try varint()
        case .fixed64: _ = try fixed64()
        case .fixed32: _ = try fixed32()
        case .lengthDelimited: _ = try lengthDelimited()
        case .endGroup: throw Failure(reason: "end-group key for field number \(number) without a start-group")
        case .startGroup:
            guard depth > 0 else { throw Failure(reason: "groups nested too deeply") }
            while true {
                guard !isAtEnd else { throw Failure(reason: "group of field number \(number) is not closed") }
                let inner = try tag()
                if inner.wireType == .endGroup {
                    guard inner.number == number else {
                        throw Failure(reason: "group of field number \(number) closed by field number \(inner.number)")
                    }
                    return
                }
                try skip(inner.wireType, number: inner.number, depth: depth - 1)
            }
        }
    }
}
