/// The key of an entry of a map field.
///
/// protobuf allows integers, bools and strings as keys. Keys order by value (strings by their
/// UTF-8 bytes), which is the order maps are encoded and printed in, so output is deterministic.
/// Strings compare by bytes rather than by Swift's canonical equivalence: two keys that differ
/// in bytes are two entries on the wire, and stay two here.
public enum MapKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    case bool(Bool)
    case int32(Int32)
    case int64(Int64)
    case uint32(UInt32)
    case uint64(UInt64)
    case string(String)

    /// The key as a protobuf value of its type.
    public var value: ProtoValue {
        switch self {
        case .bool(let v): .bool(v)
        case .int32(let v): .int32(v)
        case .int64(let v): .int64(v)
        case .uint32(let v): .uint32(v)
        case .uint64(let v): .uint64(v)
        case .string(let v): .string(v)
        }
    }

    /// The key of a protobuf value that may be one.
    public init?(_ value: ProtoValue) {
        switch value {
        case .bool(let v): self = .bool(v)
        case .int32(let v): self = .int32(v)
        case .int64(let v): self = .int64(v)
        case .uint32(let v): self = .uint32(v)
        case .uint64(let v): self = .uint64(v)
        case .string(let v): self = .string(v)
        default: return nil
        }
    }

    /// The key as JSON writes it: the string itself, or the number or bool as text.
    public var description: String {
        switch self {
        case .bool(let v): v ? "true" : "false"
        case .int32(let v): String(v)
        case .int64(let v): String(v)
        case .uint32(let v): String(v)
        case .uint64(let v): String(v)
        case .string(let v): v
        }
    }

    private var rank: Int {
        switch self {
        case .bool: 0
        case .int32: 1
        case .int64: 2
        case .uint32: 3
        case .uint64: 4
        case .string: 5
        }
    }

    public static func == (lhs: MapKey, rhs: MapKey) -> Bool {
        switch (lhs, rhs) {
        case (.bool(let a), .bool(let b)): a == b
        case (.int32(let a), .int32(let b)): a == b
        case (.int64(let a), .int64(let b)): a == b
        case (.uint32(let a), .uint32(let b)): a == b
        case (.uint64(let a), .uint64(let b)): a == b
        case (.string(let a), .string(let b)): a.utf8.elementsEqual(b.utf8)
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(rank)
        switch self {
        case .bool(let v): hasher.combine(v)
        case .int32(let v): hasher.combine(v)
        case .int64(let v): hasher.combine(v)
        case .uint32(let v): hasher.combine(v)
        case .uint64(let v): hasher.combine(v)
        case .string(let v):
            for byte in v.utf8 { hasher.combine(byte) }
            hasher.combine(0xFF as UInt16) // terminator: "ab" + "" hashes unlike "a" + "b"
        }
    }

    public static func < (lhs: MapKey, rhs: MapKey) -> Bool {
        switch (lhs, rhs) {
        case (.bool(let a), .bool(let b)): !a && b
        case (.int32(let a), .int32(let b)): a < b
        case (.int64(let a), .int64(let b)): a < b
        case (.uint32(let a), .uint32(let b)): a < b
        case (.uint64(let a), .uint64(let b)): a < b
        case (.string(let a), .string(let b)): a.utf8.lexicographicallyPrecedes(b.utf8)
        default: lhs.rank < rhs.rank
        }
    }
}
