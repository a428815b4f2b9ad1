/// Base-128 varints (unsigned LEB128) as protobuf writes them: seven bits a byte, least
/// significant group first, the high bit set on every byte but the last.
///
/// The protobuf wire format, the paging cursors and the store's record BLOBs all use this one
/// encoding. The functions are `@inlinable` because their callers (the SQLite store per column,
/// the dynamic-message codec per field) live in other modules, where a plain call would not be
/// inlined.
public enum Varint {
    /// Why a read failed.
    public enum Failure: Error, Equatable, Sendable {
        /// The input ended before a byte without the continuation bit.
        case truncated
        /// The value does not fit the requested width (this includes an encoding that goes on
        /// past the last byte that could still carry bits of it).
        case overflow
    }

    /// Appends `value` to `bytes`, in 1 ... 10 bytes.
    @inlinable
    public static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value &>>= 7
        }
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    /// The number of bytes `append` writes for `value`, 1 ... 10.
    @inlinable
    public static func size(of value: UInt64) -> Int {
        value == 0 ? 1 : (64 - value.leadingZeroBitCount + 6) / 7
    }

    /// Reads a varint of at most 64 bits starting at `index`, and moves `index` past it.
    ///
    /// - Throws: `.truncated` when `bytes` ends inside the varint; `.overflow` when it is longer
    ///   than 10 bytes or its tenth byte carries more than the 64th bit.
    @inlinable
    public static func read<Bytes: RandomAccessCollection<UInt8>>(
        from bytes: Bytes, at index: inout Bytes.Index
    ) throws(Failure) -> UInt64 {
        try read(UInt64.self, from: bytes, at: &index)
    }

    /// Reads a varint whose value must fit `Value`, starting at `index`, and moves `index` past it.
    ///
    /// Non-minimal encodings (trailing `0x80`s before a final `0x00`) are accepted, as protobuf
    /// parsers accept them, as long as they end by the last byte that can hold a bit of `Value`
    /// (the tenth for 64 bits, the fifth for 32). `index` is left unspecified after a failure.
    ///
    /// - Throws: `.truncated` when `bytes` ends inside the varint; `.overflow` when the value or
    ///   the encoding is longer than `Value` allows.
    @inlinable
    public static func read<Bytes: RandomAccessCollection<UInt8>, Value: FixedWidthInteger & UnsignedInteger>(
        _: Value.Type, from bytes: Bytes, at index: inout Bytes.Index
    ) throws(Failure) -> Value {
        var result: Value = 0
        var shift = 0
        while true {
            guard index < bytes.endIndex else { throw .truncated }
            let byte = bytes[index]
            bytes.formIndex(after: &index)
            // The last byte that can hold bits of `Value` may hold only those, and no continuation
            // bit. Invariant: so shift < Value.bitWidth below (no integer width is a multiple of 7)
            // and the masking shift never wraps.
            if shift > Value.bitWidth - 7, byte &>> UInt8(truncatingIfNeeded: Value.bitWidth - shift) != 0 {
                throw .overflow
            }
            result |= Value(byte & 0x7F) &<< shift
            if byte < 0x80 { return result }
            shift += 7
        }
    }
}
