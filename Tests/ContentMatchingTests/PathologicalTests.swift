import ContentMatching
import Glibc
import SeededRandom
import Testing

/// Time linear in the text whatever the rules: regexes that make a backtracking engine take
/// exponential time answer in milliseconds.
@Suite("Scan time")
struct PathologicalTests {
    @Test(
        "A pathological regex over 10 000 bytes answers in milliseconds",
        arguments: ["(a|aa)*b", "(a*)*c", "(a|a?)+b", "(a+)+d", ".*a.*a.*a.*z"])
    func pathological(pattern: String) throws {
        let set = try CompiledRuleSet.compile([ContentRule(id: 1, kind: .regex, pattern: pattern)])
        try #require(set.errors.isEmpty, "\(set.errors)")
        let text = String(repeating: "a", count: 10_000)
        let scanner = ContentScanner()
        _ = scanner.scan(text, with: set)
        // The thread's CPU time, not the wall clock: a busy machine (the other test processes)
        // stretches the one without the scan doing more work.
        let start = Self.threadCPUTime()
        let matches = scanner.scan(text, with: set)
        let elapsed = Self.threadCPUTime() - start
        print("\(pattern) over 10 000 bytes: \(elapsed) of CPU, \(matches.count) matches")
        #expect(matches.isEmpty)
        #expect(elapsed < .milliseconds(50))
    }

    /// The CPU time the calling thread has used.
    static func threadCPUTime() -> Duration {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
    }

    @Test("Normalization and scan of a 280-byte text, measured apart (prints the times)")
    func costPerText() throws {
        var random = SplitMix64(seed: 280)
        let rules = (0..<1_000).map { index in
            ContentRule(id: UInt64(index), kind: .word, pattern: RandomText.pattern(index: index, using: &random))
        }
        let set = try CompiledRuleSet.compile(rules)
        let texts = ["plain ascii words here and there, ", "Ünïcödé téxt wïth áccents ", "中文和ｆｕｌｌ　ｗｉｄｔｈ "].map {
            String(repeating: $0, count: 20).prefix(utf8Count: 280)
        }
        let normalizer = TextNormalizer()
        let scanner = ContentScanner()
        let rounds = 2_000
        let clock = ContinuousClock()
        for text in texts {
            let bytes = Array(text.utf8)
            var normalized = NormalizedText()
            var normalizedBytes = 0
            let normalizeStart = clock.now
            for _ in 0..<rounds {
                bytes.withUnsafeBufferPointer { normalizer.normalize($0, into: &normalized) }
                normalizedBytes &+= normalized.bytes.count
            }
            let normalizing = (clock.now - normalizeStart) / rounds
            var found = 0
            let scanStart = clock.now
            for _ in 0..<rounds { found &+= scanner.scan(bytes, with: set).count }
            let scanning = (clock.now - scanStart) / rounds
            print("\(bytes.count)-byte text: normalize \(normalizing), normalize and scan \(scanning) per text")
            #expect(normalizedBytes > 0 && found >= 0)
        }
    }
}

extension String {
    /// The longest prefix of whole characters at most `count` bytes long.
    func prefix(utf8Count count: Int) -> String {
        var result = ""
        for character in self {
            guard result.utf8.count + character.utf8.count <= count else { break }
            result.append(character)
        }
        return result
    }
}
