import ByteCoding
import Testing

@Suite("Base64")
struct Base64Tests {
    /// The test vectors of RFC 4648 §10.
    static let rfcVectors: [(String, String)] = [
        ("", ""),
        ("f", "Zg=="),
        ("fo", "Zm8="),
        ("foo", "Zm9v"),
        ("foob", "Zm9vYg=="),
        ("fooba", "Zm9vYmE="),
        ("foobar", "Zm9vYmFy"),
    ]

    @Test("the RFC 4648 vectors encode and decode", arguments: rfcVectors)
    func rfcVector(_ plain: String, _ encoded: String) throws {
        let bytes = Array(plain.utf8)
        #expect(Base64.encode(bytes) == encoded)
        #expect(try Base64.decode(encoded) == bytes)
        #expect(try Base64.decode(encoded, canonical: true) == bytes)

        let unpadded = String(encoded.prefix { $0 != "=" })
        #expect(Base64.encode(bytes, alphabet: .urlSafe, padded: false) == unpadded, "no 62 or 63 in these")
        #expect(try Base64.decode(unpadded, accepting: .urlSafe, padding: .forbidden, canonical: true) == bytes)
        #expect(try Base64.decode(unpadded, padding: .optional) == bytes)
        #expect(try Base64.decode(encoded, padding: .optional) == bytes)
    }

    @Test("62 and 63 are + and / in the standard alphabet, - and _ in the URL-safe one")
    func alphabets() throws {
        let bytes: [UInt8] = [0xFB, 0xFF, 0xBF]
        #expect(Base64.encode(bytes) == "+/+/")
        #expect(Base64.encode(bytes, alphabet: .urlSafe) == "-_-_")
        #expect(Base64.encode([0xFB, 0xFF]) == "+/8=")
        #expect(Base64.encode([0xFB, 0xFF], alphabet: .urlSafe) == "-_8=")
        #expect(Base64.encode([0xFB, 0xFF], alphabet: .urlSafe, padded: false) == "-_8")
        #expect(Base64.encode([0xFB], padded: false) == "+w")

        #expect(try Base64.decode("+/+/") == bytes)
        #expect(try Base64.decode("-_-_", accepting: .urlSafe) == bytes)
        #expect(
            try Base64.decode("+_-/", accepting: [.standard, .urlSafe]) == bytes, "both accepted: mixed in one string")
        #expect(throws: Base64.Failure.character(UInt8(ascii: "-"), offset: 0)) { try Base64.decode("-_-_") }
        #expect(throws: Base64.Failure.character(UInt8(ascii: "/"), offset: 1)) {
            try Base64.decode("_/", accepting: .urlSafe, padding: .optional)
        }
    }

    /// A text, what the decoder is told to accept, and what it gives.
    struct Case: CustomTestStringConvertible, Sendable {
        var text: String
        var alphabets: Base64.Alphabets = .standard
        var padding: Base64.Padding
        var canonical = false
        var result: Result<[UInt8], Base64.Failure>
        var testDescription: String { "\"\(text)\" \(padding)\(canonical ? " canonical" : "")" }
    }

    @Test(
        "padding, length, characters and pad bits are checked as told",
        arguments: [
            // Padding.
            Case(text: "Zg==", padding: .required, result: .success([0x66])),
            Case(text: "Zg", padding: .required, result: .failure(.padding)),
            Case(text: "Zg", padding: .optional, result: .success([0x66])),
            Case(text: "Zg", padding: .forbidden, result: .success([0x66])),
            Case(text: "Zg==", padding: .forbidden, result: .failure(.padding)),
            Case(text: "Zg=", padding: .optional, result: .failure(.padding)),
            Case(text: "Zg===", padding: .optional, result: .failure(.padding)),
            Case(text: "Z===", padding: .optional, result: .failure(.padding)),
            Case(text: "====", padding: .optional, result: .failure(.padding)),
            Case(text: "=", padding: .optional, result: .failure(.padding)),
            Case(text: "Zm8=", padding: .optional, result: .success([0x66, 0x6F])),
            Case(text: "", padding: .required, result: .success([])),
            Case(text: "", padding: .forbidden, result: .success([])),
            // Length: one character past a whole number of groups is no whole byte.
            Case(text: "Z", padding: .optional, result: .failure(.length)),
            Case(text: "Zm9vY", padding: .optional, result: .failure(.length)),
            Case(text: "Zm9vY", padding: .forbidden, result: .failure(.length)),
            // Characters: the first one outside the alphabet, at its UTF-8 offset.
            Case(text: "Zm$v", padding: .required, result: .failure(.character(UInt8(ascii: "$"), offset: 2))),
            Case(text: "Zg=A", padding: .optional, result: .failure(.character(UInt8(ascii: "="), offset: 2))),
            Case(text: "Z=g=", padding: .optional, result: .failure(.character(UInt8(ascii: "="), offset: 1))),
            Case(text: " Zg=", padding: .optional, result: .failure(.character(UInt8(ascii: " "), offset: 0))),
            Case(text: "Zm9v\nYg=", padding: .required, result: .failure(.character(0x0A, offset: 4))),
            Case(text: "Zé=", padding: .optional, result: .failure(.character(0xC3, offset: 1))),
            Case(text: "Zm8=", alphabets: .urlSafe, padding: .forbidden, result: .failure(.padding)),
            Case(text: "Zm8", alphabets: .urlSafe, padding: .forbidden, result: .success([0x66, 0x6F])),
            // Pad bits: "Zh" and "Zm9" carry bits past their last byte.
            Case(text: "Zh==", padding: .required, result: .success([0x66])),
            Case(text: "Zh==", padding: .required, canonical: true, result: .failure(.nonzeroPadBits)),
            Case(text: "Zm9", padding: .optional, result: .success([0x66, 0x6F])),
            Case(text: "Zm9", padding: .optional, canonical: true, result: .failure(.nonzeroPadBits)),
            Case(text: "Zm8", padding: .optional, canonical: true, result: .success([0x66, 0x6F])),
            // The first failure in the order of the cases of Failure.
            Case(text: "$=", padding: .optional, result: .failure(.padding)),
            Case(text: "Zm9v$", padding: .optional, result: .failure(.length)),
            Case(
                text: "$h==", padding: .required, canonical: true,
                result: .failure(.character(UInt8(ascii: "$"), offset: 0))),
        ])
    func decoding(_ check: Case) {
        let result = Result { () throws(Base64.Failure) in
            try Base64.decode(
                check.text, accepting: check.alphabets, padding: check.padding, canonical: check.canonical)
        }
        #expect(result == check.result)
    }

    @Test(
        "every byte string round-trips in both alphabets, padded or not",
        arguments: [Base64.Alphabet.standard, .urlSafe], [true, false])
    func roundTrips(_ alphabet: Base64.Alphabet, _ padded: Bool) throws {
        let alphabets: Base64.Alphabets = alphabet == .standard ? .standard : .urlSafe
        let padding: Base64.Padding = padded ? .required : .forbidden
        var inputs: [[UInt8]] = [Array(0...255), Array((0...255).reversed())]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for length in 0..<40 {
            inputs.append(
                (0..<length).map { _ in
                    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    return UInt8(truncatingIfNeeded: state >> 56)
                })
        }
        for bytes in inputs {
            let text = Base64.encode(bytes, alphabet: alphabet, padded: padded)
            #expect(text.utf8.count == (padded ? (bytes.count + 2) / 3 * 4 : (bytes.count * 4 + 2) / 3))
            #expect(try Base64.decode(text, accepting: alphabets, padding: padding, canonical: true) == bytes)
            #expect(try Base64.decode(text, accepting: [.standard, .urlSafe], padding: .optional) == bytes)
        }
    }
}
