import Moderation
import Testing

@testable import ModerationSQLite

/// The BLOB form of metadata and tags reads back what was written and refuses corrupt bytes.
@Suite("Record coding")
struct RecordCodingTests {
    @Test func roundTrips() throws {
        let metadata = [
            "b": "2", "a": "1", "": "é", String(repeating: "k", count: 200): String(repeating: "v", count: 20_000),
        ]
        #expect(try RecordCoding.metadata(RecordCoding.encode(metadata)) == metadata)
        let tags = ["x", "", "ü", String(repeating: "t", count: 130)]
        #expect(try RecordCoding.strings(RecordCoding.encode(tags)) == tags)
        #expect(RecordCoding.encode([:] as [String: String]).isEmpty && RecordCoding.encode([] as [String]).isEmpty)
        #expect(try RecordCoding.metadata([]) == [:] && RecordCoding.strings([]) == [])
    }

    @Test func layout() {
        #expect(
            RecordCoding.encode(["b": "2", "a": "1"]) == [2, 1, 0x61, 1, 0x31, 1, 0x62, 1, 0x32],
            "count, then sorted key, value")
        #expect(RecordCoding.encode(["x", "yz"]) == [2, 1, 0x78, 2, 0x79, 0x7A])
    }

    @Test(
        "corrupt bytes are a storage error",
        arguments: [
            [0x01], // a count with nothing after it
            [0x01, 0x05, 0x61], // a length past the end
            [0x80], // a truncated count
            [0x80, 0x80, 0x80, 0x80, 0x80, 0x00], // a six-byte varint
            [0xFF, 0xFF, 0xFF, 0xFF, 0x1F], // a count of 2^33 - 1
            [0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F], // a length of 2^32 - 1
        ] as [[UInt8]])
    func corrupt(_ bytes: [UInt8]) {
        #expect(throws: ModerationError.storage("corrupt record encoding")) { try RecordCoding.strings(bytes) }
        #expect(throws: ModerationError.storage("corrupt record encoding")) { try RecordCoding.metadata(bytes) }
    }
}
