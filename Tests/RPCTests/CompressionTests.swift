import ProtoBridge
import RPCCore
import RPCMessages
import SeededRandom
import TestSupport
import Testing

/// Deflater and Inflater: per-stream context takeover, independent bodies, the inflate cap,
/// corrupt input, and agreement with an independent zlib (Python's).
@Suite("Compression: raw deflate and inflate")
struct CompressionTests {
    /// Stream messages like a real event stream: similar events, some random bytes, some tiny.
    static func sampleMessages(count: Int, seed: UInt64 = 7) -> [[UInt8]] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { index in
            switch index % 7 {
            case 3:
                return (0..<Int.random(in: 0...300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            case 5: return [UInt8(index & 0xFF)]
            default:
                let event =
                    "{\"seq\":\(index),\"group\":\"g-\(index % 13)\",\"uid\":\"u-\(Int.random(in: 0...99, using: &rng))\","
                    + "\"action\":\"member.kicked\",\"reason\":\"spam in the group chat\"}"
                return Array(event.utf8)
            }
        }
    }

    static func compressStream(_ messages: [[UInt8]], deflater: Deflater = Deflater()) -> [[UInt8]] {
        messages.map { message in
            var out: [UInt8] = []
            message.withUnsafeBytes { deflater.compressStreamMessage($0, appendingTo: &out) }
            return out
        }
    }

    @Test("a stream of many messages round-trips with context takeover, each message without its sync-flush tail")
    func streamRoundTrip() throws {
        let messages = Self.sampleMessages(count: 2_000)
        let compressed = Self.compressStream(messages)
        let inflater = Inflater()
        for (message, wire) in zip(messages, compressed) {
            #expect(wire.suffix(4) != Deflater.syncFlushTail[...], "the tail must be stripped")
            var out: [UInt8] = []
            try inflater.inflateStreamMessage(wire, limit: 1 << 20, appendingTo: &out)
            #expect(out == message)
        }
        let plain = messages.reduce(0) { $0 + $1.count }
        let wire = compressed.reduce(0) { $0 + $1.count }
        #expect(wire * 2 < plain, "context takeover must pay on similar events: \(wire) of \(plain) bytes")
    }

    static let withEmptyMessages: [[UInt8]] = [
        Array("first event".utf8), [], [], Array("after two empty ones".utf8), [], [7],
    ]

    @Test("empty messages in a stream compress to a block the receiver can finish with the tail (RFC 7692 §7.2.3.6)")
    func emptyMessages() throws {
        let compressed = Self.compressStream(Self.withEmptyMessages)
        #expect(compressed.allSatisfy { !$0.isEmpty }, "an empty message still needs its block header byte")
        let inflater = Inflater()
        for (wire, message) in zip(compressed, Self.withEmptyMessages) {
            var out: [UInt8] = []
            try inflater.inflateStreamMessage(wire, limit: 1 << 20, appendingTo: &out)
            #expect(out == message)
        }
    }

    @Test("the tail is looked for only in the bytes this message produced, not in the caller's buffer")
    func tailOnlyInOwnOutput() {
        let deflater = Deflater()
        var first: [UInt8] = []
        [1, 2, 3].withUnsafeBytes { deflater.compressStreamMessage($0, appendingTo: &first) }
        var buffer = Deflater.syncFlushTail
        [UInt8]().withUnsafeBytes { deflater.compressStreamMessage($0, appendingTo: &buffer) }
        #expect(buffer.starts(with: Deflater.syncFlushTail), "bytes before the message must be left alone")
        #expect(buffer.count == 5)
    }

    @Test("messages sent uncompressed in the middle of a stream do not disturb either context")
    func uncompressedInTheMiddle() throws {
        let deflater = Deflater()
        let inflater = Inflater()
        var frames: [UInt8] = []
        let payloads = (0..<300).map { index -> [UInt8] in
            // Small ones (under FrameWriter's 32-byte threshold) go uncompressed.
            index % 4 == 1 ? [UInt8(index & 0xFF)] : TestService.streamPayload(seq: index)
        }
        for payload in payloads {
            FrameWriter.streamMessage(
                streamID: 9, encoded: EchoResponse(payload: payload).serializedBytes(), deflater: deflater,
                into: &frames)
        }
        let parsed = try FrameParser.frames(in: frames)
        #expect(parsed.contains { $0.header.isCompressed })
        #expect(parsed.contains { !$0.header.isCompressed })
        for (frame, payload) in zip(parsed, payloads) {
            var body = frame.payload
            if frame.header.isCompressed {
                body = []
                try inflater.inflateStreamMessage(frame.payload, limit: 1 << 20, appendingTo: &body)
            }
            #expect(try EchoResponse(serializedBytes: body).payload == payload)
        }
    }

    @Test("independent bodies round-trip through one reused inflater, finished or sync-flushed")
    func independentBodies() throws {
        let inflater = Inflater()
        let deflater = Deflater(windowBits: 15, memoryLevel: 8)
        for message in Self.sampleMessages(count: 100, seed: 3) {
            var finished: [UInt8] = []
            message.withUnsafeBytes { deflater.compressIndependent($0, appendingTo: &finished) }
            var out: [UInt8] = []
            try inflater.inflateIndependent(finished, limit: 1 << 20, appendingTo: &out)
            #expect(out == message)

            let flushed = Self.compressStream([message], deflater: Deflater())[0]
            out = []
            try inflater.inflateIndependent(flushed, limit: 1 << 20, appendingTo: &out)
            #expect(out == message)
        }
    }

    @Test("a body inflating to exactly the limit is accepted; one byte over is refused")
    func limitBoundary() throws {
        let body = DeflateSamples.zeros(count: 100_000)
        var out: [UInt8] = []
        try Inflater().inflateIndependent(body, limit: 100_000, appendingTo: &out)
        #expect(out.count == 100_000)
        out = []
        #expect(throws: Inflater.Failure.tooLarge(limit: 99_999)) {
            try Inflater().inflateIndependent(body, limit: 99_999, appendingTo: &out)
        }
    }

    @Test(
        "a deflate bomb (64 MiB of zeros) is refused at the limit, with bounded memory",
        arguments: [false, true])
    func bomb(asStreamMessage: Bool) throws {
        let bomb = DeflateSamples.zeros(count: 64 << 20)
        #expect(bomb.count < 128 * 1024, "the bomb is small on the wire: \(bomb.count) bytes")
        let limit = 4 << 20
        Memory.trim()
        let before = Memory.resident
        var out: [UInt8] = []
        let inflater = Inflater()
        #expect(throws: Inflater.Failure.tooLarge(limit: limit)) {
            if asStreamMessage {
                try inflater.inflateStreamMessage(bomb, limit: limit, appendingTo: &out)
            } else {
                try inflater.inflateIndependent(bomb, limit: limit, appendingTo: &out)
            }
        }
        #expect(out.count <= limit + 1)
        #expect(out.capacity <= 2 * limit + 256 * 1024, "output buffer grew to \(out.capacity) bytes")
        let grown = Memory.resident - before
        // Under AddressSanitizer RSS holds its quarantine of freed blocks: the bound is checked without it.
        #expect(Sanitizer.address || grown < 32 << 20, "inflating the bomb grew RSS by \(grown >> 20) MiB")
    }

    struct Corrupt: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        var testDescription: String { name }
    }

    @Test(
        "data that is not raw deflate is reported corrupt",
        arguments: [
            Corrupt(name: "reserved block type 3", bytes: [0xFF, 0xFF, 0xFF, 0xFF]),
            Corrupt(
                name: "stored block with mismatched LEN/NLEN", bytes: [0x01, 0x05, 0x00, 0x00, 0x00, 1, 2, 3, 4, 5]),
            Corrupt(
                name: "dynamic block with impossible code lengths",
                bytes: [0x05, 0xE0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
        ])
    func corrupt(_ sample: Corrupt) {
        var out: [UInt8] = []
        #expect {
            try Inflater().inflateIndependent(sample.bytes, limit: 1 << 20, appendingTo: &out)
        } throws: { error in
            guard case .corrupt = error as? Inflater.Failure else { return false }
            return true
        }
        #expect {
            try Inflater().inflateStreamMessage(sample.bytes, limit: 1 << 20, appendingTo: &out)
        } throws: { error in
            guard case .corrupt = error as? Inflater.Failure else { return false }
            return true
        }
    }

    @Test("a stream message after the stream's final block is corrupt")
    func dataAfterFinalBlock() throws {
        let inflater = Inflater()
        var out: [UInt8] = []
        try inflater.inflateStreamMessage(DeflateSamples.independent([1, 2, 3]), limit: 1 << 20, appendingTo: &out)
        #expect(out == [1, 2, 3])
        #expect(throws: Inflater.Failure.self) {
            try inflater.inflateStreamMessage(Self.compressStream([[4]])[0], limit: 1 << 20, appendingTo: &out)
        }
    }

    @Test(
        "Python's zlib inflates a stream made by compressStreamMessage, tail appended to each message",
        .enabled(if: Python.isAvailable, "python3 is not installed: the independent-inflater check is skipped"))
    func pythonInflatesOurStream() throws {
        let messages = Self.sampleMessages(count: 500, seed: 11)
        let compressed = Self.compressStream(messages)
        let inflated = try PythonZlib.inflateStream(compressed.map { (true, $0) })
        #expect(inflated.count == messages.count)
        #expect(inflated == messages)
    }

    @Test(
        "Python's zlib inflates a stream with empty messages in it",
        .enabled(if: Python.isAvailable, "python3 is not installed: the independent-inflater check is skipped"))
    func pythonInflatesEmptyMessages() throws {
        let compressed = Self.compressStream(Self.withEmptyMessages)
        let inflated = try PythonZlib.inflateStream(compressed.map { (true, $0) })
        #expect(inflated == Self.withEmptyMessages)
    }

    @Test(
        "Inflater inflates a stream made by Python's zlib (window 2^15) the same way",
        .enabled(if: Python.isAvailable, "python3 is not installed: the independent-deflater check is skipped"))
    func weInflatePythonStream() throws {
        let messages = Self.sampleMessages(count: 500, seed: 13)
        let compressed = try PythonZlib.deflateStream(messages)
        #expect(compressed.count == messages.count)
        let inflater = Inflater()
        for (wire, message) in zip(compressed, messages) {
            var out: [UInt8] = []
            try inflater.inflateStreamMessage(wire, limit: 1 << 20, appendingTo: &out)
            #expect(out == message)
        }
    }

    @Test(
        "gzip and zlib messages (gRPC's encodings) agree with Python's gzip and zlib both ways; a truncated one is refused",
        arguments: [CompressionFormat.gzip, .zlib])
    func wrappedFormats(_ format: CompressionFormat) throws {
        let messages = Self.sampleMessages(count: 20)
        let gzip = format == .gzip
        let deflater = Deflater(windowBits: 15, memoryLevel: 8, format: format)
        let ours = messages.map { message in
            var out: [UInt8] = []
            message.withUnsafeBytes { deflater.compressIndependent($0, appendingTo: &out) }
            return out
        }
        #expect(try PythonZlib.decompressWhole(ours, gzip: gzip) == messages)
        let theirs = try PythonZlib.compressWhole(messages, gzip: gzip)
        let inflater = Inflater(format: format)
        for (wire, message) in zip(theirs, messages) {
            var out: [UInt8] = []
            try inflater.inflateIndependent(wire, limit: 1 << 20, appendingTo: &out)
            #expect(out == message)
        }
        var out: [UInt8] = []
        let truncated = Array(theirs[0].dropLast(4))
        #expect(throws: Inflater.Failure.self) {
            try inflater.inflateIndependent(truncated, limit: 1 << 20, appendingTo: &out)
        }
    }
}
