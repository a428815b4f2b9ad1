internal import Moderation

/// The compact binary form of metadata maps and tag lists in BLOB columns: a varint count, then
/// each string as a varint length and its UTF-8 bytes (maps as key, value; keys sorted).
enum RecordCoding {
    static func encode(_ metadata: [String: String]) -> [UInt8] {
        guard !metadata.isEmpty else { return [] }
        var bytes: [UInt8] = []
        appendVarint(metadata.count, to: &bytes)
        for key in metadata.keys.sorted() {
            append(key, to: &bytes)
            append(metadata[key]!, to: &bytes)
        }
        return bytes
    }

    static func encode(_ strings: [String]) -> [UInt8] {
        guard !strings.isEmpty else { return [] }
        var bytes: [UInt8] = []
        appendVarint(strings.count, to: &bytes)
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
        appendVarint(string.utf8.count, to: &bytes)
        bytes += string.utf8
    }

    private static func appendVarint(_ value: Int, to bytes: inout [UInt8]) {
        var value = UInt64(value)
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        mutating func varint() throws(ModerationError) -> Int {
            var value = 0
            var shift = 0
            while offset < bytes.count, shift < 35 {
                let byte = bytes[offset]
                offset += 1
                value |= Int(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
            throw .storage("corrupt record encoding")
        }

        mutating func string() throws(ModerationError) -> String {
            let count = try varint()
            guard count <= bytes.count - offset else { throw .storage("corrupt record encoding") }
            defer { offset += count }
            return String(decoding: bytes[offset..<offset + count], as: UTF8.self)
        }
    }
}
