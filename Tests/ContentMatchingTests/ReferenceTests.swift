import ContentMatching
import SeededRandom
import Testing

/// The engine against `ReferenceMatcher` on generated texts: the same rule ids and spans.
@Suite("Engine against the reference matcher")
struct ReferenceTests {
    @Test("10 000 generated texts give the same matches as the reference (seeded)")
    func randomized() throws {
        var random = SplitMix64(seed: 2026)
        let scanner = ContentScanner()
        let normalizer = TextNormalizer()
        var compared = 0
        var matched = 0
        for _ in 0..<20 {
            let vocabulary = (0..<10).map { _ in Generator.word(using: &random) }
            let labels = ["ab", "cd", "x", "ex-a", "zé", "q1"]
            var rules: [ContentRule] = []
            for index in 0..<12 {
                let word = vocabulary[Int(random.next() % 10)]
                let pattern: String
                switch random.next() % 6 {
                case 0: pattern = word + "*"
                case 1: pattern = "*" + word
                case 2: pattern = "*" + word + "*"
                case 3: pattern = word + " " + vocabulary[Int(random.next() % 10)]
                default: pattern = Generator.restyle(word, using: &random)
                }
                rules.append(ContentRule(id: UInt64(index), kind: .word, pattern: pattern))
            }
            for index in 12..<16 {
                let count = 1 + Int(random.next() % 2)
                let domain = (0..<count).map { _ in labels[Int(random.next() % 6)] }.joined(separator: ".")
                rules.append(ContentRule(id: UInt64(index), kind: .domain, pattern: domain))
            }
            let set = try CompiledRuleSet.compile(rules)
            try #require(set.errors.isEmpty, "\(set.errors)")
            for _ in 0..<500 {
                let text = Generator.text(vocabulary: vocabulary, labels: labels, using: &random)
                let bytes = Array(text.utf8)
                let normalized = bytes.withUnsafeBufferPointer { normalizer.normalize($0) }
                let expected = ReferenceMatcher.matches(of: rules, in: normalized)
                let found = scanner.scan(bytes, with: set)
                #expect(found == expected, "\(rules.map(\.pattern)) in \"\(text)\"")
                compared += 1
                matched += found.count
                if found != expected { return }
            }
        }
        print("compared \(compared) texts, \(matched) matches")
        #expect(matched > 1_000)
    }
}

/// Generated words and texts: the rules' words restyled (upper case, full width, accents) with
/// letters around them, hosts with schemes, ports and paths, among separators.
enum Generator {
    static let letters: [String] = ["a", "b", "e", "o", "s", "_", "1", "é", "ß", "ж"]

    static func word(using random: inout SplitMix64) -> String {
        (0..<(1 + Int(random.next() % 3))).map { _ in letters[Int(random.next() % 10)] }.joined()
    }

    /// `word` in upper case, full width or with combining accents, or as it is.
    static func restyle(_ word: String, using random: inout SplitMix64) -> String {
        switch random.next() % 5 {
        case 0: return word.uppercased()
        case 1:
            return String(
                String.UnicodeScalarView(
                    word.unicodeScalars.map { scalar in
                        (0x61...0x7A).contains(scalar.value) ? Unicode.Scalar(scalar.value + 0xFEE0)! : scalar
                    }))
        case 2: return word.unicodeScalars.map { "\($0)\u{301}" }.joined()
        default: return word
        }
    }

    static func text(vocabulary: [String], labels: [String], using random: inout SplitMix64) -> String {
        let separators = [
            " ", " ", " ", "  ", "\n", "\t", ", ", ".", "-", "/", ":", "\u{A0}", " \u{3000}\t", " 🙂 ", "é", "x",
        ]
        var text = ""
        for _ in 0..<(1 + Int(random.next() % 10)) {
            switch random.next() % 10 {
            case 0..<5:
                text += restyle(vocabulary[Int(random.next() % UInt64(vocabulary.count))], using: &random)
            case 5, 6:
                let count = 1 + Int(random.next() % 3)
                let host = (0..<count).map { _ in labels[Int(random.next() % UInt64(labels.count))] }
                    .joined(separator: ".")
                let scheme = ["", "", "https://", "HTTP://"][Int(random.next() % 4)]
                let tail = ["", "", ":8080", "/path?q=1", ".", ".."][Int(random.next() % 6)]
                text += scheme + restyle(host, using: &random) + tail
            default:
                text += word(using: &random)
            }
            text += separators[Int(random.next() % UInt64(separators.count))]
        }
        return text
    }
}
