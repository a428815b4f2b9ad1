internal import CProtobufC
internal import Glibc

/// A Swift value type generated from a proto3 message, decoded by protobuf-c.
///
/// The generated code converts between the Swift value and protobuf-c's C struct inside a
/// `ProtoArena`; protobuf-c does the decoding's wire work. Encoding is generated in Swift
/// (`ProtoWireWriter`), byte for byte what protobuf-c packs. A message on a hot path may decode
/// itself in Swift (`decoded(from:)`), to protobuf-c's letter. Decoding never trusts its input: a
/// malformed message, invalid UTF-8, an embedded NUL in a string or a memory blow-up is a thrown
/// `ProtoDecodingError`, never a crash.
public protocol ProtoMessage: Sendable, Equatable {
    /// The message's fully-qualified proto name, e.g. "moderation.v1.KickMemberRequest".
    static var protoName: String { get }
    /// The message with every field at its zero value.
    init()
    /// Builds the protobuf-c struct of this value in `arena`; returns its `ProtobufCMessage *`.
    func cMessage(in arena: ProtoArena) -> UnsafeMutableRawPointer
    /// Unpacks `bytes` with protobuf-c, allocating from `arena`, and converts the result.
    static func unpack(_ bytes: UnsafeRawBufferPointer, arena: ProtoArena) throws(ProtoDecodingError) -> Self

    /// Decodes a message from untrusted bytes. The default unpacks with protobuf-c
    /// (`decodedByProtobufC(_:)`). A message on a hot path may decode itself in Swift instead
    /// (with `ProtoWireScanner`), and then must accept, refuse and report exactly as protobuf-c
    /// and the bridge do: a test compares the two on valid and hostile bytes.
    static func decoded(from bytes: UnsafeRawBufferPointer) throws(ProtoDecodingError) -> Self

    /// Appends the message's fields to `buffer`, without a length: the whole encoding, or a
    /// nested message's body. Generated in Swift (through `ProtoWireWriter`); the bytes must be
    /// the ones protobuf-c packs (`encode(appendingTo:)` checks, in debug builds).
    func writeFields(into buffer: inout [UInt8])

    /// Appends the message as proto3 JSON (`{…}`, compact) to `buffer`. Generated in Swift
    /// (through `ProtoJSONWriter`); the bytes must be the ones `ProtoSchema`'s
    /// `DynamicMessage.jsonUTF8()` prints with its default options (a test compares them).
    func writeJSON(into buffer: inout [UInt8])
}

extension ProtoMessage {
    /// Memory a decode may use: protobuf-c's structs are larger than the wire bytes they come
    /// from (an empty sub-message is 2 bytes on the wire and ~50 in memory), but never by more
    /// than this factor for a valid message of these protos.
    static func decodeBudget(forWireBytes count: Int) -> Int { 64 * 1024 + 32 * count }

    /// Appends the encoding of the message to `buffer`; returns the number of bytes appended.
    @discardableResult
    public func encode(appendingTo buffer: inout [UInt8]) -> Int {
        let start = buffer.count
        writeFields(into: &buffer)
        assert(encodingMatchesProtobufC(buffer[start...]), "\(Self.protoName): Swift and protobuf-c encodings differ")
        return buffer.count - start
    }

    /// Appends the encoding protobuf-c packs to `buffer`; returns the number of bytes appended.
    @discardableResult
    public func encodeByProtobufC(appendingTo buffer: inout [UInt8]) -> Int {
        ProtoArena.scratch.withScope { arena in
            let message = cMessage(in: arena).assumingMemoryBound(to: ProtobufCMessage.self)
            let size = protobuf_c_message_get_packed_size(message)
            // Packed in the arena, then copied: appending room and packing in place would first
            // zero it, which costs the same as the copy in release and far more in debug builds.
            let packed = arena.allocateArray(UInt8.self, count: max(size, 1))
            _ = protobuf_c_message_pack(message, packed)
            buffer.append(contentsOf: UnsafeBufferPointer(start: packed, count: size))
            return size
        }
    }

    /// Whether `bytes` are what protobuf-c packs for the message: the debug builds' check of the
    /// generated Swift encoders.
    public func encodingMatchesProtobufC(_ bytes: ArraySlice<UInt8>) -> Bool {
        var packed: [UInt8] = []
        encodeByProtobufC(appendingTo: &packed)
        // memcmp: a debug build compares a megabyte element by element in seconds.
        return packed.withUnsafeBytes { packed in
            bytes.withUnsafeBytes { bytes in
                packed.count == bytes.count
                    && (packed.isEmpty || memcmp(packed.baseAddress!, bytes.baseAddress!, packed.count) == 0)
            }
        }
    }

    /// The encoding of the message.
    public func serializedBytes() -> [UInt8] {
        var bytes: [UInt8] = []
        encode(appendingTo: &bytes)
        return bytes
    }

    /// The message as proto3 JSON, UTF-8 encoded: compact, JSON names, zero values left out.
    public func jsonUTF8() -> [UInt8] {
        var bytes: [UInt8] = []
        writeJSON(into: &bytes)
        return bytes
    }

    /// The message as proto3 JSON text (see `jsonUTF8()`).
    public func jsonString() -> String {
        String(decoding: jsonUTF8(), as: UTF8.self)
    }

    /// The size of the message's encoding, in bytes.
    public func serializedSize() -> Int {
        ProtoArena.scratch.withScope { arena in
            protobuf_c_message_get_packed_size(cMessage(in: arena).assumingMemoryBound(to: ProtobufCMessage.self))
        }
    }

    public static func decoded(from bytes: UnsafeRawBufferPointer) throws(ProtoDecodingError) -> Self {
        try decodedByProtobufC(bytes)
    }

    /// Decodes a message from untrusted bytes with protobuf-c, in the thread's scratch arena.
    public static func decodedByProtobufC(_ bytes: UnsafeRawBufferPointer) throws(ProtoDecodingError) -> Self {
        try ProtoArena.scratch.withScope(budget: decodeBudget(forWireBytes: bytes.count)) {
            arena throws(ProtoDecodingError) in
            try unpack(bytes, arena: arena)
        }
    }

    /// Decodes a message from untrusted bytes.
    /// - Throws: `ProtoDecodingError` naming the message type and, where known, the field.
    public init(serializedBytes bytes: UnsafeRawBufferPointer) throws(ProtoDecodingError) {
        self = try Self.decoded(from: bytes)
    }

    /// Decodes a message from untrusted bytes.
    public init(serializedBytes bytes: [UInt8]) throws(ProtoDecodingError) {
        self = try bytes.withUnsafeBytes { raw in
            Result { () throws(ProtoDecodingError) in try Self(serializedBytes: raw) }
        }.get()
    }

    /// Decodes a message from untrusted bytes.
    public init(serializedBytes bytes: ArraySlice<UInt8>) throws(ProtoDecodingError) {
        self = try bytes.withUnsafeBytes { raw in
            Result { () throws(ProtoDecodingError) in try Self(serializedBytes: raw) }
        }.get()
    }
}
