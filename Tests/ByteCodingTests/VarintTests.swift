import ByteCoding
import Testing

@Suite("Varints")
struct VarintTests {
    /// A value and its minimal encoding.
    struct Vector: CustomTestStringConvertible, Sendable {
        var value: UInt64
        var bytes: [UInt8]
        var testDescription: String { "\(value)" }
    }

    static let vectors: [Vector] = [
        Vector(value: 0, bytes: [0x00]),
        Vector(value: 1, bytes: [0x01]),
        Vector(value: 127, bytes: [0x7F]),
        Vector(value: 128, bytes: [0x80, 0x01]),
        Vector(value: 300, bytes: [0xAC, 0x02]),
        Vector(value: 16_383, bytes: [0xFF, 0x7F]),
        Vector(value: 16_384, bytes: [0x80, 0x80, 0x01]),
        Vector(value: UInt64(UInt32.max), bytes: [0xFF, 0xFF, 0xFF, 0xFF, 0x0F]),
        Vector(value: 1 << 32, bytes: [0x80, 0x80, 0x80, 0x80, 0x10]),
        Vector(value: 1 << 63, bytes: [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]),
        Vector(value: .max, bytes: [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]),
    ]

    @Test("a value is appended as its minimal encoding", arguments: vectors)
    func append(_ vector: Vector) {
        var bytes: [UInt8] = [0xEE]
        Varint.append(vector.value, to: &bytes)
        #expect(bytes == [0xEE] + vector.bytes, "appends after what is there")
        #expect(Varint.size(of: vector.value) == vector.bytes.count)
    }

    @Test("an encoding reads back, from an array, a slice and raw memory", arguments: vectors)
    func read(_ vector: Vector) throws {
        var index = 0
        #expect(try Varint.read(from: vector.bytes, at: &index) == vector.value)
        #expect(index == vector.bytes.count)

        let framed: [UInt8] = [0xAA] + vector.bytes + [0xBB]
        let slice = framed[1...]
        var sliceIndex = slice.startIndex
        #expect(try Varint.read(from: slice, at: &sliceIndex) == vector.value)
        #expect(framed[sliceIndex] == 0xBB, "stops after the last byte")

        let (rawValue, rawIndex) = vector.bytes.withUnsafeBytes { raw in
            var rawIndex = 0
            return (try? Varint.read(from: raw, at: &rawIndex), rawIndex)
        }
        #expect(rawValue == vector.value && rawIndex == vector.bytes.count)
    }

    @Test func consecutiveVarintsReadInTurn() throws {
        var bytes: [UInt8] = []
        for vector in Self.vectors { Varint.append(vector.value, to: &bytes) }
        var index = 0
        for vector in Self.vectors { #expect(try Varint.read(from: bytes, at: &index) == vector.value) }
        #expect(index == bytes.count)
    }

    /// Bytes and what reading them as 64 bits gives.
    struct Refusal: CustomTestStringConvertible, Sendable {
        var name: String
        var bytes: [UInt8]
        var failure: Varint.Failure
        var testDescription: String { name }
    }

    @Test(
        "truncated and overlong input is refused",
        arguments: [
            Refusal(name: "empty", bytes: [], failure: .truncated),
            Refusal(name: "a continuation byte alone", bytes: [0x80], failure: .truncated),
            Refusal(name: "nine continuation bytes", bytes: Array(repeating: 0xFF, count: 9), failure: .truncated),
            Refusal(name: "a 65th bit", bytes: Array(repeating: 0xFF, count: 9) + [0x02], failure: .overflow),
            Refusal(
                name: "the tenth byte continues", bytes: Array(repeating: 0xFF, count: 9) + [0x81], failure: .overflow),
            Refusal(name: "an eleventh byte", bytes: Array(repeating: 0x80, count: 10) + [0x00], failure: .overflow),
            Refusal(name: "twelve bytes of 0xFF", bytes: Array(repeating: 0xFF, count: 12), failure: .overflow),
        ])
    func refused(_ refusal: Refusal) {
        var index = 0
        #expect(throws: refusal.failure) { try Varint.read(from: refusal.bytes, at: &index) }
    }

    @Test("non-minimal encodings within ten bytes are accepted, as protobuf parsers accept them")
    func nonMinimal() throws {
        for bytes: [UInt8] in [[0x80, 0x00], Array(repeating: 0x80, count: 9) + [0x00], [0xFF, 0x80, 0x00]] {
            var index = 0
            let value = try Varint.read(from: bytes, at: &index)
            #expect(value == (bytes.first == 0xFF ? 127 : 0))
            #expect(index == bytes.count)
        }
    }

    @Test("a narrower width refuses values and encodings that do not fit it")
    func narrowerWidths() throws {
        var index = 0
        #expect(try Varint.read(UInt32.self, from: [0xFF, 0xFF, 0xFF, 0xFF, 0x0F], at: &index) == .max)
        index = 0
        #expect(try Varint.read(UInt32.self, from: [0x80, 0x80, 0x80, 0x80, 0x00], at: &index) == 0)
        for bytes: [UInt8] in [[0x80, 0x80, 0x80, 0x80, 0x10], [0x80, 0x80, 0x80, 0x80, 0x80, 0x00]] {
            index = 0
            #expect(throws: Varint.Failure.overflow) { try Varint.read(UInt32.self, from: bytes, at: &index) }
        }
        index = 0
        #expect(throws: Varint.Failure.truncated) { try Varint.read(UInt32.self, from: [0xFF, 0xFF], at: &index) }
        index = 0
        #expect(try Varint.read(UInt8.self, from: [0xFF, 0x01], at: &index) == 255)
        index = 0
        #expect(throws: Varint.Failure.overflow) { try Varint.read(UInt8.self, from: [0x80, 0x02], at: &index) }
    }

    @Test("every value round-trips at every width boundary")
    func roundTrips() throws {
        var values: [UInt64] = [0, .max]
        for bit in 0..<64 {
            let power: UInt64 = 1 << bit
            values += [power - 1, power, power + 1]
        }
        for value in values {
            var bytes: [UInt8] = []
            Varint.append(value, to: &bytes)
            #expect(
                bytes.count == max(1, (64 - value.leadingZeroBitCount + 6) / 7), "\(value) takes its minimal length")
            var index = 0
            #expect(try Varint.read(from: bytes, at: &index) == value)
            if let narrow = UInt32(exactly: value) {
                index = 0
                #expect(try Varint.read(UInt32.self, from: bytes, at: &index) == narrow)
            } else {
                index = 0
                #expect(throws: Varint.Failure.overflow) { try Varint.read(UInt32.self, from: bytes, at: &index) }
            }
        }
    }
}
