internal import ByteCoding
internal import Moderation

/// The compact binary form of metadata maps and tag lists in BLOB columns: a varint count, then
/// each string as a varint length and its UTF-8 bytes (maps as key, value; keys sorted).
enum RecordCoding {
    static func encode(_ metadata: [String: String]) -> [UInt8] {
        guard !metadata.isEmpty else { return [] }
        var bytes: [UInt8] = []
        Varint.append(UInt64(metadata.count), to: &bytes)
        for key in metadata.keys.sorted() {
            append(key, to: &bytes)
            append(metadata[key]!, to: &bytes)
        }
        return bytes
    }

    static func encode(_ strings: [String]) -> [UInt8] {
        guard !strings.isEmpty else { return [] }
        var bytes: [UInt8] = []
        Varint.append(UInt64(strings.count), to: &bytes)
        for string in strings { append(string, to: &bytes) }
        return bytes
    }

    static func metadata(_ bytes: [UInt8]) throws(ModerationError) -> [String: String] {
        guard !bytes.isEmpty else { return [:] }
        var reader = Reader(bytes: bytes)
        let count = try reader.varint()
        var result: [String: String] = [:]
        result.reserveCapacity(min(count, bytes.count))
        for _ in 0..<count { result[try reader.string()] = try reader.string() }
        return result
    }

    static func strings(_ bytes: [UInt8]) throws(ModerationError) -> [String] {
        guard !bytes.isEmpty else { return [] }
        var reader = Reader(bytes: bytes)
        let count = try reader.varint()
        var result: [String] = []
        result.reserveCapacity(min(count, bytes.count))
        for _ in 0..<count { result.append(try reader.string()) }
        return result
    }

    private static func append(_ string: String, to bytes: inout [UInt8]) {
        Varint.append(UInt64(string.utf8.count), to: &bytes)
        bytes += string.utf8
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        /// A count or length: at most 5 bytes and below 2^32, as no BLOB comes near 4 GiB.
        mutating func varint() throws(ModerationError) -> Int {
            guard let value = try? Varint.read(UInt32.self, from: bytes, at: &offset) else {
                throw .storage("corrupt record encoding")
            }
            return Int(value)
        }

        mutating func string() throws(ModerationError) -> String {
            let count = try varint()
            guard count <= bytes.count - offset else { throw .storage("corrupt record encoding") }
            defer { offset += count }
            return String(decoding: bytes[offset..<offset + count], as: UTF8.self)
        }
    }
}
