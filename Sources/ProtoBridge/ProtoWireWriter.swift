public import ByteCoding

/// Protobuf's wire encoding written in Swift, for the generated `encode(appendingTo:)` of every
/// message: fields in number order, proto3 zero values left out, byte for byte as protobuf-c
/// packs them (a debug build checks each encoding against protobuf-c's, so every test that
/// encodes a message checks the two agree).
///
/// Packing through protobuf-c first builds the message's C structs in an arena, copying every
/// string; a reply of a group and an action cost about 11 000 instructions that way. Decoding
/// stays with protobuf-c: it is where hostile bytes arrive.
public enum ProtoWireWriter {
    /// An unsigned varint (uint32, uint64, bool).
    @inlinable
    public static func varint(_ value: UInt64, _ buffer: inout [UInt8]) {
        Varint.append(value, to: &buffer)
    }

    /// An int32 or enum value: a negative one sign-extended to ten bytes, as protobuf writes it.
    @inlinable
    public static func int32(_ value: Int32, _ buffer: inout [UInt8]) {
        Varint.append(UInt64(bitPattern: Int64(value)), to: &buffer)
    }

    /// An int64 value, its two's complement as an unsigned varint.
    @inlinable
    public static func int64(_ value: Int64, _ buffer: inout [UInt8]) {
        Varint.append(UInt64(bitPattern: value), to: &buffer)
    }

    /// A sint32 value, zigzag-encoded.
    @inlinable
    public static func sint32(_ value: Int32, _ buffer: inout [UInt8]) {
        Varint.append(UInt64(UInt32(bitPattern: (value << 1) ^ (value >> 31))), to: &buffer)
    }

    /// A sint64 value, zigzag-encoded.
    @inlinable
    public static func sint64(_ value: Int64, _ buffer: inout [UInt8]) {
        Varint.append(UInt64(bitPattern: (value << 1) ^ (value >> 63)), to: &buffer)
    }

    /// A fixed32, sfixed32 or float's bits: four bytes, little-endian.
    @inlinable
    public static func fixed32(_ value: UInt32, _ buffer: inout [UInt8]) {
        for shift in stride(from: 0, to: 32, by: 8) { buffer.append(UInt8(truncatingIfNeeded: value >> shift)) }
    }

    /// A fixed64, sfixed64 or double's bits: eight bytes, little-endian.
    @inlinable
    public static func fixed64(_ value: UInt64, _ buffer: inout [UInt8]) {
        for shift in stride(from: 0, to: 64, by: 8) { buffer.append(UInt8(truncatingIfNeeded: value >> shift)) }
    }

    /// A string's length and UTF-8 bytes.
    @inlinable
    public static func string(_ value: String, _ buffer: inout [UInt8]) {
        // Through the contiguous UTF-8 (a native string's own storage, borrowed): appending the
        // UTF8View as a sequence costs several times as much for the short strings of these
        // messages. A string without contiguous UTF-8 (bridged) is copied once into one.
        let written: Void? = value.utf8.withContiguousStorageIfAvailable { lengthDelimited($0, &buffer) }
        guard written == nil else { return }
        var contiguous = value
        contiguous.withUTF8 { lengthDelimited($0, &buffer) }
    }

    /// A bytes field's length and bytes.
    @inlinable
    public static func bytes(_ value: [UInt8], _ buffer: inout [UInt8]) {
        value.withUnsafeBufferPointer { lengthDelimited($0, &buffer) }
    }

    /// A length and the bytes it counts.
    @inlinable
    static func lengthDelimited(_ bytes: UnsafeBufferPointer<UInt8>, _ buffer: inout [UInt8]) {
        Varint.append(UInt64(bytes.count), to: &buffer)
        buffer.append(contentsOf: bytes)
    }

    /// Starts a length-delimited value whose length is not known yet (a message, a packed
    /// array, a map entry): one placeholder byte for the length. Returns where the value starts.
    @inlinable
    public static func beginLength(_ buffer: inout [UInt8]) -> Int {
        buffer.append(0)
        return buffer.count
    }

    /// Ends the value begun at `start`: writes its length in the placeholder. A value of 128
    /// bytes or more is moved up to make room for the longer varint — one move of the value,
    /// where computing every message's size first would walk each nested message twice.
    @inlinable
    public static func endLength(_ buffer: inout [UInt8], from start: Int) {
        let length = buffer.count - start
        if length < 0x80 {
            buffer[start - 1] = UInt8(length)
            return
        }
        let size = Varint.size(of: UInt64(length))
        buffer.insert(contentsOf: repeatElement(0, count: size - 1), at: start)
        var value = UInt64(length)
        var index = start - 1
        while value >= 0x80 {
            buffer[index] = UInt8(truncatingIfNeeded: value) | 0x80
            value &>>= 7
            index += 1
        }
        buffer[index] = UInt8(truncatingIfNeeded: value)
    }
}
