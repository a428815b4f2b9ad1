import SeededRandom

/// Random patterns and texts for the tests that need many.
enum RandomText {
    /// Letters, digits, marks and full-width forms, some of which normalize to others.
    static let wordScalars: [String] = [
        "a", "b", "c", "d", "e", "s", "p", "m", "x", "o", "1", "_", "é", "É", "ü", "Ａ", "ｂ", "ж", "中", "ß",
    ]
    /// What goes between words: spaces, punctuation, a no-break space, an emoji.
    static let separators: [String] = [" ", " ", " ", "  ", "\n", "\t", ", ", ".", "-", "/", ":", "\u{A0}", " 🙂 "]

    /// A word of 1 to `maximum` random word characters.
    static func word(maximum: Int, using random: inout SplitMix64) -> String {
        let length = 1 + Int(random.next() % UInt64(maximum))
        return (0..<length).map { _ in wordScalars[Int(random.next() % UInt64(wordScalars.count))] }.joined()
    }

    /// A distinct word-rule pattern for rule `index` (some with wildcards, some phrases).
    static func pattern(index: Int, using random: inout SplitMix64) -> String {
        let base = "w\(index)" + word(maximum: 6, using: &random)
        switch random.next() % 8 {
        case 0: return base + "*"
        case 1: return "*" + base
        case 2: return base + " " + word(maximum: 4, using: &random)
        default: return base
        }
    }
}
