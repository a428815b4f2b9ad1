import ContentMatching
import SeededRandom
import Testing

/// Compiling rule sets: refused patterns come back one by one with Hyperscan's reason, and the
/// largest sets the service allows compile.
@Suite("Rule compilation")
struct CompileTests {
    @Test(
        "Patterns Hyperscan or the rule's syntax refuses are named with the reason",
        arguments: [
            (ContentRule.Kind.regex, "(a+)\\1", "back-references are unsupported"),
            (.regex, "foo(?=bar)", "zero-width assertions are not supported"),
            (.regex, "(?<!x)spam", "zero-width assertions are not supported"),
            (.regex, "(?<=a)b", "zero-width assertions are not supported"),
            (.regex, "(unclosed", "Missing close parenthesis"),
            (.regex, "a*", "empty"),
            (.word, "  ", "at least one word"),
            (.word, "*", "prefix or suffix"),
            (.domain, "exa mple.com", "not a domain"),
            (.domain, "a..b", "not a domain"),
        ])
    func refused(kind: ContentRule.Kind, pattern: String, reason: String) throws {
        let rules = [
            ContentRule(id: 1, kind: .word, pattern: "fine"),
            ContentRule(id: 2, kind: kind, pattern: pattern),
            ContentRule(id: 3, kind: .regex, pattern: "al+so fine"),
        ]
        let set = try CompiledRuleSet.compile(rules)
        #expect(set.rules.map(\.id) == [1, 3])
        let error = try #require(set.errors.first)
        #expect(set.errors.count == 1)
        #expect(error.ruleID == 2)
        #expect(error.pattern == pattern)
        #expect(error.reason.lowercased().contains(reason.lowercased()), "\(error.reason)")
        #expect(error.description.contains(pattern))
        #expect(CompiledRuleSet.validate(rules[1]) == error)
        #expect(CompiledRuleSet.validate(rules[0]) == nil)
        // The rest of the set still matches ("fine" twice, once inside the regex's match).
        #expect(ContentScanner().scan("fine, allllso fine", with: set).map(\.ruleID) == [1, 3, 1])
    }

    @Test("Several refused regexes in one set are each named")
    func severalRefused() throws {
        let rules = (0..<20).map { index in
            index % 5 == 0
                ? ContentRule(id: UInt64(index), kind: .regex, pattern: "(x\(index))\\1")
                : ContentRule(id: UInt64(index), kind: .word, pattern: "word\(index)")
        }
        let set = try CompiledRuleSet.compile(rules)
        #expect(set.errors.map(\.ruleID).sorted() == [0, 5, 10, 15])
        #expect(set.rules.count == 16)
    }

    @Test("The limits compile: 10 000 word rules (the app's) and 1 000 (a group's)", arguments: [10_000, 1_000])
    func limits(count: Int) throws {
        var random = SplitMix64(seed: UInt64(count))
        let rules = (0..<count).map { index in
            ContentRule(id: UInt64(index), kind: .word, pattern: RandomText.pattern(index: index, using: &random))
        }
        let clock = ContinuousClock()
        let start = clock.now
        let set = try CompiledRuleSet.compile(rules)
        let elapsed = clock.now - start
        print("compiled \(count) word rules in \(elapsed), database \(set.databaseSize) bytes")
        #expect(set.errors.isEmpty)
        #expect(set.rules.count == count)
        let scanner = ContentScanner()
        for index in [0, count / 2, count - 1] {
            let word = rules[index].pattern.replacingStars()
            let matches = scanner.scan("say \(word) again", with: set)
            #expect(matches.contains { $0.ruleID == UInt64(index) }, "\(rules[index].pattern)")
        }
    }
}

extension String {
    /// The pattern with its wildcards taken as nothing: a text it matches.
    func replacingStars() -> String {
        String(unicodeScalars.filter { $0 != "*" }.map(Character.init))
    }
}
