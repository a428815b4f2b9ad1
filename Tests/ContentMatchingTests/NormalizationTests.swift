import ContentMatching
import SeededRandom
import Testing

/// Normalization: NFKC, case folding and diacritics removed, and each normalized byte mapped
/// back to the bytes of the text as sent.
@Suite("Text normalization")
struct NormalizationTests {
    @Test(
        "Case, accents, full width and compatibility forms read as their plain form",
        arguments: [
            ("BÁDWORD", "badword"),
            ("ｂａｄｗｏｒｄ", "badword"),
            ("Ｂａ́ｄ", "bad"),
            ("e\u{301}te\u{301}", "ete"),
            ("Straße", "strasse"),
            ("ﬁne", "fine"),
            ("Ωμέγα", "ωμεγα"),
            ("naïve café", "naive cafe"),
            ("①②", "12"),
            ("plain ascii 123", "plain ascii 123"),
            ("a \t\n b", "a b"),
            ("x\u{3000}\u{A0}\u{2028}y", "x y"),
            (" lead and trail\r\n", " lead and trail "),
            ("Ｂ\u{2003}ｃ", "b c"),
            ("", ""),
        ])
    func normalizes(text: String, expected: String) {
        #expect(TextNormalizer().normalize(text) == expected)
    }

    @Test("Every normalized byte maps back to the original bytes of its segment")
    func mapsBack() {
        let text = Array("aÉ\u{301}ｂ c".utf8)
        let normalized = text.withUnsafeBufferPointer { TextNormalizer().normalize($0) }
        #expect(normalized.string == "aeb c")
        // "a" is byte 0; "É" + U+0301 are bytes 1..<5 (one segment); "ｂ" is 5..<8; " " 8; "c" 9.
        #expect(normalized.originalRange(of: 0..<1) == 0..<1)
        #expect(normalized.originalRange(of: 1..<2) == 1..<5)
        #expect(normalized.originalRange(of: 2..<3) == 5..<8)
        #expect(normalized.originalRange(of: 1..<5) == 1..<10)
    }

    @Test("A run of white space is one space that maps back to the whole run")
    func whiteSpaceRuns() {
        // "a" 0, " \t" 1..<3, U+3000 3..<6, "\n" 6, "b" 7, " " 8, U+00A0 9..<11, U+0301 11..<13, "c" 13.
        let text = Array("a \t\u{3000}\nb \u{A0}\u{301}c".utf8)
        let normalized = text.withUnsafeBufferPointer { TextNormalizer().normalize($0) }
        #expect(normalized.string == "a b c")
        #expect(normalized.originalRange(of: 1..<2) == 1..<7)
        #expect(normalized.originalRange(of: 0..<3) == 0..<8)
        // The no-break space and its mark are one segment, which joins the space before it.
        #expect(normalized.originalRange(of: 3..<4) == 8..<13)
        #expect(normalized.originalRange(of: 4..<5) == 13..<14)
    }

    @Test("Bytes that are not UTF-8 read as U+FFFD, one byte each, and never crash")
    func invalidBytes() {
        let text: [UInt8] = [0x61, 0xFF, 0xC3, 0x28, 0xE2, 0x82, 0xED, 0xA0, 0x80, 0xF4, 0x90, 0x80, 0x80, 0x62]
        let normalized = text.withUnsafeBufferPointer { TextNormalizer().normalize($0) }
        #expect(normalized.string.unicodeScalars.first == "a")
        #expect(normalized.string.unicodeScalars.last == "b")
        #expect(normalized.originalRange(of: 0..<normalized.bytes.count) == 0..<text.count)
        var random = SplitMix64(seed: 7)
        let normalizer = TextNormalizer()
        for _ in 0..<2_000 {
            let bytes = (0..<Int(random.next() % 40)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let result = bytes.withUnsafeBufferPointer { normalizer.normalize($0) }
            #expect(String(validating: result.bytes, as: UTF8.self) != nil)
            if !result.bytes.isEmpty {
                #expect(result.originalRange(of: 0..<result.bytes.count).upperBound <= bytes.count)
            }
        }
    }
}
