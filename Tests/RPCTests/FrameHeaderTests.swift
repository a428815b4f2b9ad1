import RPCCore
import Testing

/// The 12 header bytes as PROTOCOL.md lays them out, written and read back.
@Suite("FrameHeader: the 12 bytes on the wire")
struct FrameHeaderTests {
    @Test(
        "write lays out length, type, flags, two zero bytes and the stream id, big-endian; read gives them back",
        arguments: [
            (FrameHeader(length: 0, type: .hello, streamID: 0), [0, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0, 0]),
            (
                FrameHeader(length: 129, type: .message, streamID: 625),
                [0, 0, 0, 0x81, FrameType.message.rawValue, 0, 0, 0, 0, 0, 0x02, 0x71]
            ),
            (
                FrameHeader(
                    length: 0x0102_0304, type: .message, flags: FrameHeader.compressedFlag, streamID: 0xA1B2_C3D4),
                [0x01, 0x02, 0x03, 0x04, FrameType.message.rawValue, 0x01, 0, 0, 0xA1, 0xB2, 0xC3, 0xD4]
            ),
            (
                FrameHeader(length: .max, type: .trailers, flags: 0xFF, streamID: .max),
                [0xFF, 0xFF, 0xFF, 0xFF, FrameType.trailers.rawValue, 0xFF, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF]
            ),
        ] as [(FrameHeader, [UInt8])])
    func layout(header: FrameHeader, bytes: [UInt8]) {
        var buffer: [UInt8] = [0xEE]
        header.write(to: &buffer)
        #expect(buffer == [0xEE] + bytes, "appended after what the buffer held")
        let read = bytes.withUnsafeBytes { FrameHeader.read(from: $0) }
        #expect(read.header == header && read.reserved == 0)
    }
}
