/// The type byte of a frame (PROTOCOL.md). Types 0x80–0xFF are extensions and are ignored.
public struct FrameType: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let hello = FrameType(rawValue: 1)
    public static let helloAck = FrameType(rawValue: 2)
    public static let call = FrameType(rawValue: 3)
    public static let reply = FrameType(rawValue: 4)
    public static let message = FrameType(rawValue: 5)
    public static let trailers = FrameType(rawValue: 6)
    public static let cancel = FrameType(rawValue: 7)
    public static let ping = FrameType(rawValue: 8)
    public static let pong = FrameType(rawValue: 9)
    public static let goaway = FrameType(rawValue: 10)

    /// True for 0x80–0xFF, the range reserved for extensions that receivers ignore.
    public var isExtension: Bool { rawValue >= 0x80 }

    /// True for the ten types of protocol version 1.
    public var isKnown: Bool { rawValue >= 1 && rawValue <= 10 }

    public var description: String {
        let names = [
            "", "HELLO", "HELLO_ACK", "CALL", "REPLY", "MESSAGE", "TRAILERS", "CANCEL", "PING", "PONG", "GOAWAY",
        ]
        return isKnown ? names[Int(rawValue)] : "0x" + String(rawValue, radix: 16)
    }
}

/// The fixed 12-byte big-endian header of every frame.
public struct FrameHeader: Equatable, Sendable {
    public static let size = 12
    /// Flag bit 0: the frame's body is raw-deflate compressed.
    public static let compressedFlag: UInt8 = 0x01

    /// Payload length, header excluded.
    public var length: UInt32
    public var type: FrameType
    public var flags: UInt8
    public var streamID: UInt32

    public init(length: UInt32, type: FrameType, flags: UInt8 = 0, streamID: UInt32) {
        self.length = length
        self.type = type
        self.flags = flags
        self.streamID = streamID
    }

    public var isCompressed: Bool { flags & Self.compressedFlag != 0 }

    /// Reads a header from the first 12 bytes of `bytes` (which must hold at least 12).
    /// The reserved field is returned so the caller can insist it is zero.
    public static func read(from bytes: UnsafeRawBufferPointer) -> (header: FrameHeader, reserved: UInt16) {
        let length = UInt32(bytes[0]) << 24 | UInt32(bytes[1]) << 16 | UInt32(bytes[2]) << 8 | UInt32(bytes[3])
        let reserved = UInt16(bytes[6]) << 8 | UInt16(bytes[7])
        let stream = UInt32(bytes[8]) << 24 | UInt32(bytes[9]) << 16 | UInt32(bytes[10]) << 8 | UInt32(bytes[11])
        return (
            FrameHeader(length: length, type: FrameType(rawValue: bytes[4]), flags: bytes[5], streamID: stream),
            reserved
        )
    }

    /// Appends the 12 header bytes to `buffer`, in one append: a fan-out writes one header per
    /// message, and twelve appends (each checking capacity and uniqueness) cost more than the
    /// message's copy.
    public func write(to buffer: inout [UInt8]) {
        // length (4 bytes), type, flags, 2 reserved zero bytes; then the stream id: big-endian.
        let front = (UInt64(length) << 32 | UInt64(type.rawValue) << 24 | UInt64(flags) << 16).bigEndian
        let header = (front, streamID.bigEndian)
        withUnsafeBytes(of: header) { bytes in
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[0..<Self.size]))
        }
    }
}

/// The 8 bytes a client sends before its first frame: "MRPC", version u16 = 1, u16 0.
public enum Preface {
    public static let bytes: [UInt8] = [0x4D, 0x52, 0x50, 0x43, 0x00, 0x01, 0x00, 0x00]
    public static let size = 8
    public static let version: UInt16 = 1

    /// Why `bytes` (8 of them) is not a valid preface, or nil when it is.
    public static func problem(in bytes: UnsafeRawBufferPointer) -> String? {
        guard bytes[0] == 0x4D, bytes[1] == 0x52, bytes[2] == 0x50, bytes[3] == 0x43 else {
            return "the connection does not start with the MRPC preface"
        }
        let version = UInt16(bytes[4]) << 8 | UInt16(bytes[5])
        guard version == Self.version else {
            return "protocol version \(version) is not supported (this server speaks 1)"
        }
        guard bytes[6] == 0, bytes[7] == 0 else { return "the preface's reserved bytes are not zero" }
        return nil
    }
}

/// Big-endian u32 helpers for the length prefixes inside CALL and REPLY payloads.
public enum BigEndian {
    public static func append(_ value: UInt32, to buffer: inout [UInt8]) {
        buffer.append(UInt8(truncatingIfNeeded: value >> 24))
        buffer.append(UInt8(truncatingIfNeeded: value >> 16))
        buffer.append(UInt8(truncatingIfNeeded: value >> 8))
        buffer.append(UInt8(truncatingIfNeeded: value))
    }

    public static func readUInt32(_ bytes: UnsafeRawBufferPointer, at offset: Int = 0) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
            | UInt32(bytes[offset + 3])
    }

    /// Overwrites 4 bytes at `offset` of `buffer`.
    public static func store(_ value: UInt32, in buffer: inout [UInt8], at offset: Int) {
        buffer[offset] = UInt8(truncatingIfNeeded: value >> 24)
        buffer[offset + 1] = UInt8(truncatingIfNeeded: value >> 16)
        buffer[offset + 2] = UInt8(truncatingIfNeeded: value >> 8)
        buffer[offset + 3] = UInt8(truncatingIfNeeded: value)
    }
}
