// protobuf-c's header is included textually by the generated C targets too; with
// CModerationProto in this module's graph its constants resolve to that module's copy.
internal import CModerationProto
internal import CProtobufC
public import ProtoBridge
import SeededRandom

/// Random, valid protobuf encodings of any message type, made by walking protobuf-c's own
/// descriptors — so every message of `proto/` can be exercised without a hand-written sample.
///
/// Map entries are written with unique keys in sorted order (the bridge writes maps sorted), so
/// that protobuf-c's re-encoding and the bridge's can be compared byte for byte.
public struct RandomMessages {
    private var rng: SplitMix64

    public init(seed: UInt64) {
        rng = SplitMix64(seed: seed)
    }

    /// A random encoding of `type`, nesting sub-messages at most `depth` deep.
    public mutating func encoding<M: ProtoMessage>(of type: M.Type, depth: Int = 3) -> [UInt8] {
        message(ProtoDescriptors.descriptor(of: type), depth: depth)
    }

    private mutating func message(_ descriptor: UnsafePointer<ProtobufCMessageDescriptor>, depth: Int) -> [UInt8] {
        var out: [UInt8] = []
        let fields = UnsafeBufferPointer(start: descriptor.pointee.fields, count: Int(descriptor.pointee.n_fields))
        var oneofChosen: Set<UInt32> = []
        for field in fields {
            let isOneof = field.flags & UInt32(PROTOBUF_C_FIELD_FLAG_ONEOF.rawValue) != 0
            if isOneof {
                // Members of one oneof share a quantifier offset; set at most one of them.
                if oneofChosen.contains(field.quantifier_offset) || Bool.random(using: &rng) { continue }
                oneofChosen.insert(field.quantifier_offset)
                value(field, depth: depth, into: &out)
                continue
            }
            if field.label == PROTOBUF_C_LABEL_REPEATED {
                if field.type == PROTOBUF_C_TYPE_MESSAGE,
                    let entry = ProtoDescriptors.mapEntry(field)
                {
                    mapEntries(field, entry: entry, depth: depth, into: &out)
                } else {
                    repeated(field, depth: depth, into: &out)
                }
            } else if Bool.random(using: &rng) {
                value(field, depth: depth, into: &out)
            }
        }
        return out
    }

    private mutating func repeated(_ field: ProtobufCFieldDescriptor, depth: Int, into out: inout [UInt8]) {
        let count = Int.random(in: 0...3, using: &rng)
        guard count > 0 else { return }
        if field.flags & UInt32(PROTOBUF_C_FIELD_FLAG_PACKED.rawValue) != 0 || Self.isPackable(field.type) {
            var payload: [UInt8] = []
            for _ in 0..<count { scalar(field, into: &payload) }
            Wire.tag(field.id, wireType: 2, into: &out)
            Wire.varint(UInt64(payload.count), into: &out)
            out += payload
        } else {
            for _ in 0..<count { value(field, depth: depth, into: &out) }
        }
    }

    private mutating func mapEntries(
        _ field: ProtobufCFieldDescriptor, entry: UnsafePointer<ProtobufCMessageDescriptor>,
        depth: Int, into out: inout [UInt8]
    ) {
        let count = Int.random(in: 0...3, using: &rng)
        let keys = Set((0..<count).map { _ in "k\(Int.random(in: 0...99, using: &rng))" }).sorted()
        let valueField = entry.pointee.fields[1]
        for key in keys {
            var body: [UInt8] = []
            Wire.tag(1, wireType: 2, into: &body)
            Wire.bytes(Array(key.utf8), into: &body)
            value(valueField, depth: depth, into: &body)
            Wire.tag(field.id, wireType: 2, into: &out)
            Wire.bytes(body, into: &out)
        }
    }

    private mutating func value(_ field: ProtobufCFieldDescriptor, depth: Int, into out: inout [UInt8]) {
        switch field.type {
        case PROTOBUF_C_TYPE_STRING:
            Wire.tag(field.id, wireType: 2, into: &out)
            Wire.bytes(Array(randomString().utf8), into: &out)
        case PROTOBUF_C_TYPE_BYTES:
            Wire.tag(field.id, wireType: 2, into: &out)
            Wire.bytes(
                (0..<Int.random(in: 0...8, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }, into: &out
            )
        case PROTOBUF_C_TYPE_MESSAGE:
            guard depth > 0 else { return }
            let sub = field.descriptor.assumingMemoryBound(to: ProtobufCMessageDescriptor.self)
            Wire.tag(field.id, wireType: 2, into: &out)
            Wire.bytes(message(sub, depth: depth - 1), into: &out)
        default:
            Wire.tag(field.id, wireType: Self.wireType(field.type), into: &out)
            scalar(field, into: &out)
        }
    }

    private mutating func scalar(_ field: ProtobufCFieldDescriptor, into out: inout [UInt8]) {
        switch field.type {
        case PROTOBUF_C_TYPE_BOOL:
            Wire.varint(UInt64.random(in: 0...1, using: &rng), into: &out)
        case PROTOBUF_C_TYPE_ENUM:
            // Mostly known values, sometimes one this build does not know.
            Wire.varint(UInt64(Bool.random(using: &rng) ? Int.random(in: 0...3, using: &rng) : 77), into: &out)
        case PROTOBUF_C_TYPE_INT32, PROTOBUF_C_TYPE_INT64:
            let value = Int64.random(in: -5...1_000_000_000_000, using: &rng)
            let clamped = field.type == PROTOBUF_C_TYPE_INT32 ? Int64(Int32(truncatingIfNeeded: value)) : value
            Wire.varint(UInt64(bitPattern: clamped), into: &out)
        case PROTOBUF_C_TYPE_UINT32:
            Wire.varint(UInt64(UInt32.random(in: 0...UInt32.max, using: &rng)), into: &out)
        case PROTOBUF_C_TYPE_UINT64:
            Wire.varint(UInt64.random(in: 0...UInt64.max, using: &rng), into: &out)
        case PROTOBUF_C_TYPE_SINT32, PROTOBUF_C_TYPE_SINT64:
            let value = Int64.random(in: -1_000_000...1_000_000, using: &rng)
            Wire.varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)), into: &out)
        case PROTOBUF_C_TYPE_FIXED32, PROTOBUF_C_TYPE_SFIXED32, PROTOBUF_C_TYPE_FLOAT:
            Wire.fixed(UInt64(UInt32.random(in: 0...UInt32.max, using: &rng)), bytes: 4, into: &out)
        default:
            Wire.fixed(UInt64.random(in: 0...UInt64.max, using: &rng), bytes: 8, into: &out)
        }
    }

    private mutating func randomString() -> String {
        let pieces = ["", "a", "uid-7", "Ünïcödé", "日本語", "🙂", "x y", "\"quoted\"", "tab\there"]
        return (0..<Int.random(in: 0...3, using: &rng)).map { _ in pieces.randomElement(using: &rng)! }.joined()
    }

    private static func isPackable(_ type: ProtobufCType) -> Bool {
        type != PROTOBUF_C_TYPE_STRING && type != PROTOBUF_C_TYPE_BYTES && type != PROTOBUF_C_TYPE_MESSAGE
    }

    private static func wireType(_ type: ProtobufCType) -> UInt32 {
        switch type {
        case PROTOBUF_C_TYPE_FIXED32, PROTOBUF_C_TYPE_SFIXED32, PROTOBUF_C_TYPE_FLOAT: 5
        case PROTOBUF_C_TYPE_FIXED64, PROTOBUF_C_TYPE_SFIXED64, PROTOBUF_C_TYPE_DOUBLE: 1
        default: 0
        }
    }
}

/// protobuf-c's view of a message type: its descriptor, and its own re-encoding of bytes.
public enum ProtoDescriptors {
    /// The protobuf-c descriptor of a generated message type.
    static func descriptor<M: ProtoMessage>(of type: M.Type) -> UnsafePointer<ProtobufCMessageDescriptor> {
        ProtoArena.scratch.withScope { arena in
            M().cMessage(in: arena).assumingMemoryBound(to: ProtobufCMessage.self).pointee.descriptor
        }
    }

    /// The entry descriptor when `field` is a map (a repeated `…Entry` message of key and value).
    static func mapEntry(_ field: ProtobufCFieldDescriptor) -> UnsafePointer<ProtobufCMessageDescriptor>? {
        let entry = field.descriptor.assumingMemoryBound(to: ProtobufCMessageDescriptor.self)
        guard entry.pointee.n_fields == 2, String(cString: entry.pointee.short_name).hasSuffix("Entry"),
            String(cString: entry.pointee.fields[0].name) == "key",
            String(cString: entry.pointee.fields[1].name) == "value"
        else { return nil }
        return entry
    }

    /// protobuf-c's own unpack-then-pack of `bytes` as `type`, or nil when it refuses them.
    public static func canonical<M: ProtoMessage>(_ bytes: [UInt8], as type: M.Type) -> [UInt8]? {
        let descriptor = descriptor(of: type)
        return bytes.withUnsafeBufferPointer { input -> [UInt8]? in
            guard let message = protobuf_c_message_unpack(descriptor, nil, input.count, input.baseAddress) else {
                return nil
            }
            defer { protobuf_c_message_free_unpacked(message, nil) }
            var out = [UInt8](repeating: 0, count: protobuf_c_message_get_packed_size(message))
            out.withUnsafeMutableBufferPointer { _ = protobuf_c_message_pack(message, $0.baseAddress!) }
            return out
        }
    }
}

/// Protobuf wire-format writing, for building test inputs by hand.
public enum Wire {
    public static func varint(_ value: UInt64, into out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    public static func tag(_ field: UInt32, wireType: UInt32, into out: inout [UInt8]) {
        varint(UInt64(field << 3 | wireType), into: &out)
    }

    public static func bytes(_ value: [UInt8], into out: inout [UInt8]) {
        varint(UInt64(value.count), into: &out)
        out += value
    }

    public static func fixed(_ value: UInt64, bytes count: Int, into out: inout [UInt8]) {
        for i in 0..<count { out.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
    }

    /// A length-delimited field: tag, length, bytes.
    public static func field(_ number: UInt32, _ value: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        tag(number, wireType: 2, into: &out)
        bytes(value, into: &out)
        return out
    }
}
