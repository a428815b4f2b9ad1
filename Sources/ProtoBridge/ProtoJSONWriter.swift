public import ByteCoding

/// proto3 JSON written in Swift, for the generated `writeJSON(into:)` of every message: the
/// canonical compact form, byte for byte what `ProtoSchema`'s `DynamicMessage.jsonUTF8()` prints
/// with its default options (a test compares the two on every message type).
///
/// Members go in declaration order under their JSON names (the generated code writes each key,
/// quoted and with its colon, as one literal); proto3 zero values, empty lists and maps, and unset
/// messages are left out; a oneof's member or an `optional` field is written whenever it is set;
/// 64-bit integers as strings; enums by name (a number no value names, as a number); bytes as
/// padded standard base64; map entries in the order of their keys' UTF-8 bytes. The escapes and
/// the forms of numbers are `ByteCoding`'s `JSONText`, which the descriptor-driven encoder uses too.
///
/// Objects and arrays are written with every member or element after a comma, and the first
/// comma becomes the opening bracket at the end (`endObject(_:from:)`): no flag per member.
public enum ProtoJSONWriter {
    /// Starts an object or array; returns where its first member's comma will be.
    @inlinable
    public static func begin(_ buffer: inout [UInt8]) -> Int {
        buffer.count
    }

    /// Ends the object begun at `start`: its first comma becomes `{`, or `{}` when it is empty.
    @inlinable
    public static func endObject(_ buffer: inout [UInt8], from start: Int) {
        end(buffer: &buffer, from: start, open: UInt8(ascii: "{"), close: UInt8(ascii: "}"))
    }

    /// Ends the array begun at `start`: its first comma becomes `[`, or `[]` when it is empty.
    @inlinable
    public static func endArray(_ buffer: inout [UInt8], from start: Int) {
        end(buffer: &buffer, from: start, open: UInt8(ascii: "["), close: UInt8(ascii: "]"))
    }

    @inlinable
    static func end(buffer: inout [UInt8], from start: Int, open: UInt8, close: UInt8) {
        if buffer.count == start {
            buffer.append(open)
        } else {
            buffer[start] = open
        }
        buffer.append(close)
    }

    /// Appends literal text: a member's `,"key":`, a `,` between elements, `true`.
    @inlinable
    public static func raw(_ text: StaticString, _ buffer: inout [UInt8]) {
        buffer.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// A string value (or a map's key), quoted and escaped.
    @inlinable
    public static func string(_ value: String, _ buffer: inout [UInt8]) {
        JSONText.appendQuoted(value, to: &buffer)
    }

    /// A map's key that is not a string: its decimal or `true`/`false` text, quoted.
    @inlinable
    public static func key(_ value: some BinaryInteger, _ buffer: inout [UInt8]) {
        if value < 0 {
            JSONText.appendQuotedInteger(Int64(value), to: &buffer)
        } else {
            JSONText.appendQuotedInteger(UInt64(value), to: &buffer)
        }
    }

    /// A bool map key, quoted.
    @inlinable
    public static func key(_ value: Bool, _ buffer: inout [UInt8]) {
        raw(value ? "\"true\"" : "\"false\"", &buffer)
    }

    /// A bool value.
    @inlinable
    public static func bool(_ value: Bool, _ buffer: inout [UInt8]) {
        raw(value ? "true" : "false", &buffer)
    }

    /// An int32, sint32 or sfixed32 value: a number.
    @inlinable
    public static func int32(_ value: Int32, _ buffer: inout [UInt8]) {
        JSONText.appendInteger(Int64(value), to: &buffer)
    }

    /// A uint32 or fixed32 value: a number.
    @inlinable
    public static func uint32(_ value: UInt32, _ buffer: inout [UInt8]) {
        JSONText.appendInteger(UInt64(value), to: &buffer)
    }

    /// An int64, sint64 or sfixed64 value: a string.
    @inlinable
    public static func int64(_ value: Int64, _ buffer: inout [UInt8]) {
        JSONText.appendQuotedInteger(value, to: &buffer)
    }

    /// A uint64 or fixed64 value: a string.
    @inlinable
    public static func uint64(_ value: UInt64, _ buffer: inout [UInt8]) {
        JSONText.appendQuotedInteger(value, to: &buffer)
    }

    /// A double value: a number, or "NaN", "Infinity", "-Infinity".
    @inlinable
    public static func double(_ value: Double, _ buffer: inout [UInt8]) {
        JSONText.appendDouble(value, to: &buffer)
    }

    /// A float value: a number, or "NaN", "Infinity", "-Infinity".
    @inlinable
    public static func float(_ value: Float, _ buffer: inout [UInt8]) {
        JSONText.appendFloat(value, to: &buffer)
    }

    /// A bytes value: its padded standard base64, quoted.
    @inlinable
    public static func bytes(_ value: [UInt8], _ buffer: inout [UInt8]) {
        JSONText.appendBase64(value, to: &buffer)
    }

    /// An enum value: its name in the .proto, or its number when this build does not name it.
    @inlinable
    public static func enumValue(_ value: some ProtoEnum, _ buffer: inout [UInt8]) {
        if let name = value.protoValueName {
            JSONText.appendQuoted(name, to: &buffer)
        } else {
            JSONText.appendInteger(Int64(value.rawValue), to: &buffer)
        }
    }

    /// The entries of a string-keyed map in the order the descriptor-driven encoder prints them:
    /// by their keys' UTF-8 bytes (Swift's `<` on strings compares by canonical equivalence).
    @inlinable
    public static func sortedEntries<Value>(_ map: [String: Value]) -> [(key: String, value: Value)] {
        map.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
    }

    /// The entries of a bool-keyed map: `false` first.
    @inlinable
    public static func sortedEntries<Value>(_ map: [Bool: Value]) -> [(key: Bool, value: Value)] {
        map.sorted { !$0.key && $1.key }
    }

    /// The entries of a map with integer keys, by key.
    @inlinable
    public static func sortedEntries<Key: Comparable, Value>(_ map: [Key: Value]) -> [(key: Key, value: Value)] {
        map.sorted { $0.key < $1.key }
    }
}
