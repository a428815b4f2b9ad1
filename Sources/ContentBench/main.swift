import ContentMatching
import Glibc
import SeededRandom

// Measures the content-rule engine on the app's largest rule set: its compile time, and the cost
// per text of normalization alone and of the whole scan. Run it from a release build:
//
//   swift run -c release content-bench                     the figures, one `name value unit` a line
//   swift run -c release content-bench --write-rules FILE  the rule set, `kind<TAB>action<TAB>pattern`
//
// Everything is generated from fixed seeds, so every run (and a service-level benchmark that
// loads the written rules) sees the same rules and texts.

/// The benchmark's rule set: 10 000 word rules (mostly single words, some with a `*`, some
/// phrases of two or three words) and 100 regexes of the shapes moderators write, every one
/// distinct. Words are pronounceable nonsense (consonant-vowel syllables), so that the English
/// filler of the texts never matches them by chance.
struct BenchmarkRules {
    static let wordCount = 10_000
    static let regexCount = 100

    private(set) var rules: [ContentRule] = []
    /// For each rule, a text fragment it matches.
    private(set) var samples: [String] = []

    init() {
        var random = SplitMix64(seed: 0x5EED)
        var used = Set<String>()
        func freshWord() -> String {
            while true {
                let word = Self.pronounceableWord(using: &random)
                if used.insert(word).inserted { return word }
            }
        }
        for index in 0..<Self.wordCount {
            let pattern: String
            let sample: String
            switch random.below(100) {
            case 0..<6:
                let word = freshWord()
                (pattern, sample) = (word + "*", word + "ers")
            case 6..<8:
                let word = freshWord()
                (pattern, sample) = ("*" + word, "un" + word)
            case 8..<16:
                let words = (0..<(2 + random.below(2))).map { _ in freshWord() }
                (pattern, sample) = (words.joined(separator: " "), words.joined(separator: "  "))
            default:
                let word = freshWord()
                (pattern, sample) = (word, word)
            }
            rules.append(ContentRule(id: UInt64(index + 1), kind: .word, pattern: pattern))
            samples.append(sample)
        }
        let shapes: [(String) -> (pattern: String, sample: String)] = [
            { (#"\bfree\s+\#($0)\b"#, "free \($0)") },
            { (#"\d{3}[-.]\d{4}\s*\#($0)"#, "555-1234 \($0)") },
            { (#"(buy|sell)\s+\#($0)\s+now"#, "sell \($0) now") },
            { (#"cheap\s+\#($0)s?"#, "cheap \($0)s") },
            { (#"\#($0)(x{2,}|z{3,})"#, "\($0)xxx") },
            { (#"https?://\#($0)\.[a-z]{2,6}"#, "https://\($0).shop") },
            { (#"\b\#($0)[0-9]{2,4}\b"#, "\($0)2024") },
            { (#"[a-z0-9.]+@\#($0)\.(com|net|org)"#, "bob@\($0).net") },
            { (#"\#($0)!{3,}"#, "\($0)!!!!") },
            { (#"(win|won)\s+\$?\d+\s+\#($0)"#, "won $500 \($0)") },
        ]
        for index in 0..<Self.regexCount {
            let (pattern, sample) = shapes[index % shapes.count](freshWord())
            rules.append(ContentRule(id: UInt64(Self.wordCount + index + 1), kind: .regex, pattern: pattern))
            samples.append(sample)
        }
    }

    /// Two to four syllables, each a consonant and a vowel, some closed by a consonant.
    static func pronounceableWord(using random: inout SplitMix64) -> String {
        let onsets = ["b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "tr", "st", "kl"]
        let vowels = ["a", "e", "i", "o", "u", "ai", "ou"]
        let codas = ["", "", "", "n", "r", "s", "k"]
        var word = ""
        for _ in 0..<(2 + random.below(3)) {
            word += onsets[random.below(onsets.count)] + vowels[random.below(vowels.count)]
            word += codas[random.below(codas.count)]
        }
        return word
    }

    /// A group's largest set (1 000 rules): the first 990 word rules and 10 regexes, one of
    /// each shape.
    var groupRules: [ContentRule] {
        Array(rules.prefix(990)) + rules[Self.wordCount..<Self.wordCount + 10]
    }

    /// The rules as lines of `kind<TAB>action<TAB>pattern`.
    var lines: String {
        rules.map { "\($0.kind == .regex ? "REGEX" : "WORD")\tBLOCK\t\($0.pattern)\n" }.joined()
    }
}

/// `count` texts of exactly 280 bytes of English filler (which no rule matches), one in a
/// hundred with a fragment one rule matches; with `accented`, a word in five is written with
/// accents or capitals, as the normalizer must undo.
func benchmarkTexts(count: Int, rules: BenchmarkRules, accented: Bool) -> [[UInt8]] {
    let filler = [
        "the", "and", "of", "to", "we", "will", "meet", "at", "station", "tomorrow", "morning", "thanks",
        "for", "your", "help", "with", "this", "photo", "looks", "great", "see", "you", "later", "ok",
        "where", "is", "party", "tonight", "lol", "that", "was", "funny", "coffee", "after", "class",
    ]
    let restyled = ["Café", "NAÏVE", "résumé", "Thé", "Über", "ﬁne", "ＯＫ", "Zoë"]
    var random = SplitMix64(seed: 280)
    var texts: [[UInt8]] = []
    texts.reserveCapacity(count)
    for index in 0..<count {
        var words: [String] = []
        var length = 0
        while length < 300 {
            let word =
                accented && random.below(5) == 0
                ? restyled[random.below(restyled.count)] : filler[random.below(filler.count)]
            words.append(word)
            length += word.utf8.count + 1
        }
        if index % 100 == 0 {
            words[random.below(20)] = rules.samples[random.below(rules.samples.count)]
        }
        var bytes = Array(words.joined(separator: random.below(4) == 0 ? ", " : " ").utf8)
        while bytes.count > 280 { bytes.removeLast() }
        while bytes.last.map({ $0 & 0xC0 == 0x80 || $0 >= 0xC0 }) ?? false { bytes.removeLast() }
        while bytes.count < 280 { bytes.append(UInt8(ascii: ".")) }
        texts.append(bytes)
    }
    return texts
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

func seconds(_ duration: Duration) -> Double {
    let (whole, attoseconds) = duration.components
    return Double(whole) + Double(attoseconds) * 1e-18
}

func report(_ name: String, _ value: Double, _ unit: String, decimals: Int = 1) {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    print("\(name) \(decimals == 0 ? String(Int(rounded)) : String(rounded)) \(unit)")
}

/// The thread's processor time so far, in seconds.
func threadTime() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
}

/// The medians over `runs` of `body`'s wall-clock time and of its thread's processor time, in
/// seconds: on a shared machine the wall clock counts the time other processes take, the
/// processor time does not.
func measure(runs: Int, _ body: () throws -> Void) rethrows -> (wall: Double, processor: Double) {
    let clock = ContinuousClock()
    var wall: [Double] = []
    var processor: [Double] = []
    for _ in 0..<runs {
        let start = clock.now
        let startTime = threadTime()
        try body()
        processor.append(threadTime() - startTime)
        wall.append(seconds(clock.now - start))
    }
    return (median(wall), median(processor))
}

/// Writes `message` to standard error and exits with `status`.
func fail(_ message: String, status: Int32) -> Never {
    let line = Array((message + "\n").utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(status)
}

let arguments = CommandLine.arguments.dropFirst()
let benchmark = BenchmarkRules()
if arguments.first == "--write-rules" {
    guard arguments.count == 2, let path = arguments.last else {
        fail("usage: content-bench [--write-rules FILE]", status: 2)
    }
    guard let file = fopen(path, "w") else { fail("content-bench: cannot open \(path)", status: 1) }
    let written = fputs(benchmark.lines, file)
    guard fclose(file) == 0, written >= 0 else { fail("content-bench: cannot write \(path)", status: 1) }
    exit(0)
}
guard arguments.isEmpty else { fail("usage: content-bench [--write-rules FILE]", status: 2) }

var compiled = CompiledRuleSet()
let compileTime = try measure(runs: 5) { compiled = try CompiledRuleSet.compile(benchmark.rules) }
guard compiled.errors.isEmpty else { fail("content-bench: rules refused: \(compiled.errors)", status: 1) }
report("rules_word", Double(BenchmarkRules.wordCount), "rules", decimals: 0)
report("rules_regex", Double(BenchmarkRules.regexCount), "rules", decimals: 0)
report("compile_app_set", compileTime.wall * 1e3, "ms")
report("compile_app_set_cpu", compileTime.processor * 1e3, "ms")
report("database_app_set", Double(compiled.databaseSize) / 1e6, "MB", decimals: 2)
let groupTime = try measure(runs: 5) { _ = try CompiledRuleSet.compile(benchmark.groupRules) }
report("compile_group_set", groupTime.wall * 1e3, "ms")
report("compile_group_set_cpu", groupTime.processor * 1e3, "ms")

let normalizer = TextNormalizer()
let scanner = ContentScanner()
var normalized = NormalizedText()
for (name, accented) in [("ascii", false), ("accented", true)] {
    let texts = benchmarkTexts(count: 10_000, rules: benchmark, accented: accented)
    var matched = 0
    for text in texts where !scanner.scan(text, with: compiled).isEmpty { matched += 1 }
    let normalizing = measure(runs: 7) {
        for text in texts {
            text.withUnsafeBufferPointer { normalizer.normalize($0, into: &normalized) }
        }
    }
    let scanning = measure(runs: 7) {
        for text in texts { _ = scanner.scan(text, with: compiled) }
    }
    report("normalize_\(name)", normalizing.wall * 1e9 / Double(texts.count), "ns/text", decimals: 0)
    report("normalize_\(name)_cpu", normalizing.processor * 1e9 / Double(texts.count), "ns/text", decimals: 0)
    report("scan_\(name)", scanning.wall * 1e9 / Double(texts.count), "ns/text", decimals: 0)
    report("scan_\(name)_cpu", scanning.processor * 1e9 / Double(texts.count), "ns/text", decimals: 0)
    report("match_rate_\(name)", Double(matched) * 100 / Double(texts.count), "%", decimals: 2)
}
