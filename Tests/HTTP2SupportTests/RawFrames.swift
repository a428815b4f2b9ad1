import HTTP2Support

/// Hand-written HTTP/2 bytes, only for what no client library would send (a bad preface, floods),
/// and a reader of the server's output frames.
enum RawFrames {
    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    /// One frame: 9-byte header (length, type, flags, stream id), then the payload.
    static func frame(type: UInt8, flags: UInt8 = 0, streamID: UInt32 = 0, payload: [UInt8] = []) -> [UInt8] {
        let length = UInt32(payload.count)
        return [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags]
            + [
                UInt8(streamID >> 24 & 0x7F), UInt8(streamID >> 16 & 0xFF), UInt8(streamID >> 8 & 0xFF),
                UInt8(streamID & 0xFF),
            ]
            + payload
    }

    static let settings: UInt8 = 0x4
    static let ping: UInt8 = 0x6
    static let goaway: UInt8 = 0x7

    /// The frames in `bytes` (complete ones only): type, flags, stream id, payload.
    static func parse(_ bytes: [UInt8]) -> [(type: UInt8, flags: UInt8, streamID: UInt32, payload: [UInt8])] {
        var frames: [(type: UInt8, flags: UInt8, streamID: UInt32, payload: [UInt8])] = []
        var index = 0
        while index + 9 <= bytes.count {
            let length = Int(bytes[index]) << 16 | Int(bytes[index + 1]) << 8 | Int(bytes[index + 2])
            guard index + 9 + length <= bytes.count else { break }
            let streamID = bytes[index + 5..<index + 9].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } & 0x7FFF_FFFF
            frames.append((bytes[index + 3], bytes[index + 4], streamID, Array(bytes[index + 9..<index + 9 + length])))
            index += 9 + length
        }
        return frames
    }
}
