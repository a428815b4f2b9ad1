import ModerationMessages
import ProtoBridge
import SeededRandom
import TestSupport
import Testing

/// CheckPost's request and response code themselves in Swift (`CheckPost+Wire.swift`); these
/// tests hold them to protobuf-c: the same message or the same error for every input, and the
/// same bytes for every response.
@Suite("CheckPost's Swift codec against protobuf-c")
struct CheckPostWireTests {
    @Test("Requests: valid, odd and hostile encodings decode or fail exactly as through protobuf-c")
    func requestsDecodeAsProtobufCDecodes() {
        var generator = RequestBytes(seed: 0xC4EC)
        var outcomes: [String: Int] = [:]
        for round in 0..<20_000 {
            var bytes = generator.request()
            generator.mutate(&bytes, round: round)
            let swift = bytes.withUnsafeBytes { raw in
                Result { () throws(ProtoDecodingError) in try CheckPostRequest.decoded(from: raw) }
            }
            let protobufC = bytes.withUnsafeBytes { raw in
                Result { () throws(ProtoDecodingError) in try CheckPostRequest.decodedByProtobufC(raw) }
            }
            #expect(swift == protobufC, "bytes \(bytes)")
            if swift != protobufC { return }
            switch protobufC {
            case .success: outcomes["decoded", default: 0] += 1
            case .failure(let error): outcomes[error.reason, default: 0] += 1
            }
        }
        // The generator reaches every outcome, so the comparison above covers each.
        #expect(outcomes["decoded", default: 0] > 2_000, "\(outcomes)")
        #expect(outcomes["not a valid protobuf encoding", default: 0] > 2_000, "\(outcomes)")
        for reason in [
            "field guid contains a NUL character (in a nested moderation.v1.PostCheck)",
            "field uid contains a NUL character (in a nested moderation.v1.PostCheck)",
            "field guid is not valid UTF-8 (in a nested moderation.v1.PostCheck)",
            "field uid is not valid UTF-8 (in a nested moderation.v1.PostCheck)",
        ] {
            #expect(outcomes[reason, default: 0] > 50, "\(reason): \(outcomes)")
        }
    }

    @Test(
        "Edge encodings protobuf-c accepts or refuses in its own way",
        arguments: [
            // Field number 0 in one byte: refused; in two, and the largest a 5-byte key carries:
            // unknown fields.
            [0x02, 0x00], [0x82, 0x00, 0x00], [0xFA, 0xFF, 0xFF, 0xFF, 0x7F, 0x00],
            // A 6-byte key, a 6-byte length, an 11-byte varint: refused.
            [0x8A, 0x80, 0x80, 0x80, 0x80, 0x00, 0x00], [0x0A, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00],
            [0x10] + [UInt8](repeating: 0x80, count: 10) + [0x00],
            // Groups and wire types 6 and 7, even in unknown fields: refused.
            [0x13, 0x14], [0x16], [0x17],
            // A check with the wrong wire type; a check whose guid has the wrong wire type.
            [0x08, 0x01], [0x0A, 0x02, 0x08, 0x01],
            // Non-minimal keys and lengths: accepted.
            [0x8A, 0x00, 0x85, 0x00, 0x8A, 0x80, 0x00, 0x01, 0x61],
        ] as [[UInt8]])
    func edgeEncodings(_ bytes: [UInt8]) {
        let swift = bytes.withUnsafeBytes { raw in
            Result { () throws(ProtoDecodingError) in try CheckPostRequest.decoded(from: raw) }
        }
        let protobufC = bytes.withUnsafeBytes { raw in
            Result { () throws(ProtoDecodingError) in try CheckPostRequest.decodedByProtobufC(raw) }
        }
        #expect(swift == protobufC)
    }

    @Test("Responses: the same bytes protobuf-c packs")
    func responsesEncodeAsProtobufCPacks() {
        var rng = SplitMix64(seed: 0x5E5)
        let codes = [
            "", "ERR_GROUP_NOT_FOUND", "ERR_GROUP_NOT_JOINED", "ERR_BANNED_GROUPMEMBER", "ERR_MEMBER_MUTED",
            "ERR_GROUP_FROZEN", "é—🙂", String(repeating: "x", count: 200),
        ]
        let times: [Int64] = [0, -1, 1, 127, 128, 1_767_225_600_000, .max, .min]
        for _ in 0..<2_000 {
            let response = CheckPostResponse(
                results: (0..<Int.random(in: 0...120, using: &rng)).map { _ in
                    PostCheckResult(
                        allowed: Bool.random(using: &rng), errorCode: codes.randomElement(using: &rng)!,
                        mutedUntil: Bool.random(using: &rng)
                            ? times.randomElement(using: &rng)! : Int64.random(in: .min ... .max, using: &rng))
                })
            var swift: [UInt8] = [7]
            var protobufC: [UInt8] = [7]
            let swiftCount = response.encode(appendingTo: &swift)
            let protobufCCount = response.encodeByProtobufC(appendingTo: &protobufC)
            #expect(swift == protobufC)
            #expect(swiftCount == protobufCCount && swiftCount == swift.count - 1)
            if swift != protobufC { return }
        }
    }
}

/// Encodings of CheckPostRequest, mostly valid and some hostile: checks with guid and uid in
/// either order, repeated, empty or missing; strings of ASCII, UTF-8, invalid UTF-8 and NUL;
/// unknown fields of every wire type, keys and lengths written long.
private struct RequestBytes {
    private var rng: SplitMix64

    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    mutating func request() -> [UInt8] {
        var out: [UInt8] = []
        for _ in 0..<Int.random(in: 0...6, using: &rng) {
            if chance(0.1) {
                unknownField(into: &out)
            } else {
                lengthDelimited(field: 1, check(), into: &out)
            }
        }
        return out
    }

    /// Leaves most inputs alone (their strings and unknown fields decide) and breaks the rest:
    /// truncated, bytes flipped, or bytes inserted.
    mutating func mutate(_ bytes: inout [UInt8], round: Int) {
        switch round % 4 {
        case 0 where !bytes.isEmpty:
            bytes.removeLast(Int.random(in: 1...bytes.count, using: &rng))
        case 1 where !bytes.isEmpty:
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
            }
        case 2 where chance(0.3):
            bytes.insert(UInt8.random(in: 0...255, using: &rng), at: Int.random(in: 0...bytes.count, using: &rng))
        default:
            break
        }
    }

    private mutating func check() -> [UInt8] {
        var out: [UInt8] = []
        for _ in 0..<Int.random(in: 0...3, using: &rng) {
            switch Int.random(in: 0..<10, using: &rng) {
            case 0..<4: lengthDelimited(field: 1, text(), into: &out)
            case 4..<8: lengthDelimited(field: 2, text(), into: &out)
            case 8: unknownField(into: &out)
            default:
                // A declared field with a varint instead of bytes.
                key(field: UInt32.random(in: 1...2, using: &rng), wireType: 0, into: &out)
                out.append(1)
            }
        }
        return out
    }

    private mutating func text() -> [UInt8] {
        switch Int.random(in: 0..<20, using: &rng) {
        case 0: return []
        case 1: return Array("grüße-🙂".utf8)
        case 2: return [0x61, 0x00, 0x62] // NUL
        case 3: return [0x61, 0xC3, 0x28] // invalid UTF-8
        case 4: return [0xED, 0xA0, 0x80] // a surrogate
        case 5: return [0xC0, 0x80] // overlong NUL
        case 6: return [0x00, 0xFF] // both faults: NUL is reported
        default:
            let letters = Array("abcdefghijklmnopqrstuvwxyz0123456789_-ABC".utf8)
            return (0..<Int.random(in: 1...24, using: &rng)).map { _ in letters.randomElement(using: &rng)! }
        }
    }

    private mutating func unknownField(into out: inout [UInt8]) {
        let field = ([0, 3, 15, 16, 2047, 1 << 28, UInt32.max >> 3] as [UInt32]).randomElement(using: &rng)!
        let wireType = ([0, 0, 1, 2, 2, 5, 3, 4, 6, 7] as [UInt32]).randomElement(using: &rng)!
        key(field: field, wireType: wireType, into: &out)
        switch wireType {
        case 0:
            Wire.varint(
                UInt64.random(in: 0...UInt64.max, using: &rng) >> UInt64.random(in: 0...63, using: &rng), into: &out)
        case 1: Wire.fixed(UInt64.random(in: 0...UInt64.max, using: &rng), bytes: 8, into: &out)
        case 2: Wire.bytes(text(), into: &out)
        case 5: Wire.fixed(UInt64.random(in: 0...UInt64.max, using: &rng), bytes: 4, into: &out)
        default: break
        }
    }

    private mutating func lengthDelimited(field: UInt32, _ value: [UInt8], into out: inout [UInt8]) {
        key(field: field, wireType: 2, into: &out)
        varint(UInt64(value.count), into: &out)
        out += value
    }

    /// A key, sometimes written longer than it needs (as protobuf-c still reads it, up to 5 bytes).
    private mutating func key(field: UInt32, wireType: UInt32, into out: inout [UInt8]) {
        let value = UInt64(field) << 3 | UInt64(wireType)
        varint(value, into: &out)
    }

    /// A varint, sometimes with a few redundant continuation bytes.
    private mutating func varint(_ value: UInt64, into out: inout [UInt8]) {
        var encoded: [UInt8] = []
        Wire.varint(value, into: &encoded)
        if chance(0.05) {
            encoded[encoded.count - 1] |= 0x80
            encoded += [UInt8](repeating: 0x80, count: Int.random(in: 0...3, using: &rng)) + [0]
        }
        out += encoded
    }

    private mutating func chance(_ probability: Double) -> Bool {
        Double.random(in: 0..<1, using: &rng) < probability
    }
}
