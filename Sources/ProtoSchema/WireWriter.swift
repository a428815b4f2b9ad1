import ByteCoding

/// Appends protobuf wire-format primitives to a byte buffer.
///
/// The dynamic-message encoder writes through it; kept apart so the encoding rules (varints,
/// sign extension of negative `int32`, little-endian fixed widths) live in one place.
enum WireWriter {
    static func varint(_ value: UInt64, into out: inout [UInt8]) {
        Varint.append(value, to: &out)
    }

    static func tag(_ number: Int32, _ wireType: WireReader.WireType, into out: inout [UInt8]) {
        varint(UInt64(UInt32(bitPattern: number)) << 3 | UInt64(wireType.rawValue), into: &out)
    }

    static func fixed32(_ value: UInt32, into out: inout [UInt8]) {
        for i in 0..<4 { out.append(UInt8(truncatingIfNeeded: value >> (8 * UInt32(i)))) }
    }

    static func fixed64(_ value: UInt64, into out: inout [UInt8]) {
        for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
    }

    static func lengthDelimited(_ bytes: [UInt8], into out: inout [UInt8]) {
        varint(UInt64(bytes.count), into: &out)
        out.append(contentsOf: bytes)
    }

    static func zigZag32(_ value: Int32) -> UInt64 {
        UInt64(UInt32(bitPattern: (value << 1) ^ (value >> 31)))
    }

    static func zigZag64(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }
}
