/// The pieces of JSON text that proto3 JSON prints: string literals, integers, floating-point
/// numbers and bytes (as base64 strings), appended to a UTF-8 buffer.
///
/// The one implementation of every byte both proto3 JSON encoders write: the descriptor-driven
/// one (`ProtoSchema`'s `DynamicMessage.jsonUTF8()`) and the generated one (`writeJSON(into:)`,
/// through `ProtoBridge`'s `ProtoJSONWriter`), whose outputs must be identical. `@inlinable` for
/// the same reason as `Varint`: their callers live in other modules.
public enum JSONText {
    /// Appends `string` as a JSON string literal: `"`, `\` and the control characters escaped
    /// (`\n`, `\r`, `\t`, `\b`, `\f`, else `\u00XX`), every other byte as it is (non-ASCII text
    /// stays UTF-8, never `\u` escapes).
    @inlinable
    public static func appendQuoted(_ string: String, to out: inout [UInt8]) {
        // Through the contiguous UTF-8 (a native string's own storage, borrowed); a bridged
        // string is copied once into one.
        let written: Void? = string.utf8.withContiguousStorageIfAvailable { appendQuoted(utf8: $0, to: &out) }
        guard written == nil else { return }
        var contiguous = string
        contiguous.withUTF8 { appendQuoted(utf8: $0, to: &out) }
    }

    /// Appends UTF-8 text as a JSON string literal (see `appendQuoted(_:to:)`).
    @inlinable
    public static func appendQuoted(utf8: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Runs of bytes that need no escape go in at once.
        var runStart = 0
        for index in 0..<utf8.count {
            let byte = utf8[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            if runStart < index { out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index])) }
            appendEscape(byte, to: &out)
            runStart = index + 1
        }
        if runStart < utf8.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
        out.append(UInt8(ascii: "\""))
    }

    /// The escape of one byte that JSON does not allow bare in a string.
    @usableFromInline
    static func appendEscape(_ byte: UInt8, to out: inout [UInt8]) {
        let backslash = UInt8(ascii: "\\")
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(contentsOf: [backslash, byte])
        case 0x0A: out.append(contentsOf: [backslash, UInt8(ascii: "n")])
        case 0x0D: out.append(contentsOf: [backslash, UInt8(ascii: "r")])
        case 0x09: out.append(contentsOf: [backslash, UInt8(ascii: "t")])
        case 0x08: out.append(contentsOf: [backslash, UInt8(ascii: "b")])
        case 0x0C: out.append(contentsOf: [backslash, UInt8(ascii: "f")])
        default:
            let hex: StaticString = "0123456789ABCDEF"
            out.append(contentsOf: [backslash, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
            out.append(hex.utf8Start[Int(byte >> 4)])
            out.append(hex.utf8Start[Int(byte & 0xF)])
        }
    }

    /// Appends a signed integer in decimal, as `String(value)` writes it.
    @inlinable
    public static func appendInteger(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        appendInteger(value.magnitude, to: &out)
    }

    /// Appends an unsigned integer in decimal, as `String(value)` writes it.
    @inlinable
    public static func appendInteger(_ value: UInt64, to out: inout [UInt8]) {
        if value < 10 {
            out.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value))
            return
        }
        // The digits from the last, into a buffer on the stack, then appended at once.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var index = digits.count
            var rest = value
            while rest > 0 {
                let (quotient, digit) = rest.quotientAndRemainder(dividingBy: 10)
                index -= 1
                digits[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: digit)
                rest = quotient
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[index...]))
        }
    }

    /// Appends a 64-bit integer as proto3 JSON writes it: in decimal, inside a string.
    @inlinable
    public static func appendQuotedInteger(_ value: Int64, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        appendInteger(value, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// Appends a 64-bit unsigned integer as proto3 JSON writes it: in decimal, inside a string.
    @inlinable
    public static func appendQuotedInteger(_ value: UInt64, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        appendInteger(value, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// Appends a double as proto3 JSON writes it: a finite one as a number (`number(_:)`), NaN
    /// and the infinities as the strings "NaN", "Infinity" and "-Infinity".
    @inlinable
    public static func appendDouble(_ value: Double, to out: inout [UInt8]) {
        if value.isFinite {
            out.append(contentsOf: number(value).utf8)
        } else {
            appendQuoted(nonFiniteName(value), to: &out)
        }
    }

    /// Appends a float as proto3 JSON writes it (see `appendDouble(_:to:)`).
    @inlinable
    public static func appendFloat(_ value: Float, to out: inout [UInt8]) {
        if value.isFinite {
            out.append(contentsOf: number(value).utf8)
        } else {
            appendQuoted(nonFiniteName(Double(value)), to: &out)
        }
    }

    /// Appends bytes as a JSON string of their padded standard base64.
    @inlinable
    public static func appendBase64(_ bytes: [UInt8], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: Base64.encode(bytes).utf8)
        out.append(UInt8(ascii: "\""))
    }

    /// A finite double in the shortest form that reads back to the same value: integers
    /// without a fraction ("3", "-0"), others as Swift prints them ("0.1", "1e-07", "1.5e+300").
    public static func number(_ value: Double) -> String {
        if value == value.rounded(.towardZero) && value.magnitude < 1e15 {
            return value == 0 && value.sign == .minus ? "-0" : String(Int64(value))
        }
        return value.description
    }

    /// A finite float in the shortest form that reads back to the same `Float`.
    public static func number(_ value: Float) -> String {
        if value == value.rounded(.towardZero) && value.magnitude < 1e7 {
            return value == 0 && value.sign == .minus ? "-0" : String(Int64(value))
        }
        return value.description
    }

    /// The proto3 JSON name of a non-finite value: "NaN", "Infinity" or "-Infinity".
    public static func nonFiniteName(_ value: Double) -> String {
        value.isNaN ? "NaN" : value < 0 ? "-Infinity" : "Infinity"
    }
}
