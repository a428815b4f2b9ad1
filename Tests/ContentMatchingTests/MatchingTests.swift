import ContentMatching
import SeededRandom
import Testing

/// Each kind of rule over normalized text, with spans reported in the text as sent.
@Suite("Content matching")
struct MatchingTests {
    /// One case: rules of one kind, a text, and what each match covers in the text as sent.
    struct Case: Sendable, CustomTestStringConvertible {
        var kind: ContentRule.Kind
        var patterns: [String]
        var text: String
        /// (index of the pattern, the original text the match covers), in order of start.
        var expected: [(Int, String)]

        var testDescription: String { "\(patterns) in \"\(text)\"" }
    }

    static let wordCases: [Case] = [
        Case(kind: .word, patterns: ["badword"], text: "a badword here", expected: [(0, "badword")]),
        Case(kind: .word, patterns: ["badword"], text: "BÁDWORD!", expected: [(0, "BÁDWORD")]),
        Case(kind: .word, patterns: ["badword"], text: "ｂａｄｗｏｒｄ", expected: [(0, "ｂａｄｗｏｒｄ")]),
        Case(kind: .word, patterns: ["BÁDWORD"], text: "so badword", expected: [(0, "badword")]),
        Case(kind: .word, patterns: ["badword"], text: "badwords notbadword badword_x", expected: []),
        Case(kind: .word, patterns: ["bad"], text: "bad, bad-bad.", expected: [(0, "bad"), (0, "bad"), (0, "bad")]),
        Case(
            kind: .word, patterns: ["spam*"], text: "spam spammer SPAMMING unspam",
            expected: [
                (0, "spam"), (0, "spammer"), (0, "SPAMMING"),
            ]),
        Case(
            kind: .word, patterns: ["*spam"], text: "spam antispam spammer", expected: [(0, "spam"), (0, "antispam")]),
        Case(kind: .word, patterns: ["*spam*"], text: "xspamx spam sp am", expected: [(0, "xspamx"), (0, "spam")]),
        Case(kind: .word, patterns: ["buy now"], text: "Buy  Now! buynow buy nowhere", expected: [(0, "Buy  Now")]),
        Case(kind: .word, patterns: ["buy now"], text: "buy\nnow", expected: [(0, "buy\nnow")]),
        Case(kind: .word, patterns: ["buy now"], text: "x buy \t\u{2028} now", expected: [(0, "buy \t\u{2028} now")]),
        Case(kind: .word, patterns: ["a b c"], text: "ä b  c, a b", expected: [(0, "ä b  c")]),
        Case(
            kind: .word, patterns: [" buy\u{3000}\tnow "], text: "BUY\u{A0}NOW, buy now",
            expected: [(0, "BUY\u{A0}NOW"), (0, "buy now")]),
        Case(kind: .word, patterns: ["free mon*"], text: "FREE money now", expected: [(0, "FREE money")]),
        Case(kind: .word, patterns: ["café"], text: "le CAFE, le café", expected: [(0, "CAFE"), (0, "café")]),
        Case(kind: .word, patterns: ["слово"], text: "СЛОВО словосочетание", expected: [(0, "СЛОВО")]),
        Case(kind: .word, patterns: ["a", "b"], text: "b a", expected: [(1, "b"), (0, "a")]),
        Case(kind: .word, patterns: ["c++"], text: "I like c++ a lot", expected: [(0, "c++")]),
    ]

    static let domainCases: [Case] = [
        Case(kind: .domain, patterns: ["example.com"], text: "see example.com now", expected: [(0, "example.com")]),
        Case(
            kind: .domain, patterns: ["example.com"], text: "https://www.example.com/path?q=1",
            expected: [
                (0, "www.example.com")
            ]),
        Case(
            kind: .domain, patterns: ["example.com"], text: "http://a.b.EXAMPLE.COM:8080/x",
            expected: [
                (0, "a.b.EXAMPLE.COM")
            ]),
        Case(kind: .domain, patterns: ["example.com"], text: "go to example.com.", expected: [(0, "example.com")]),
        Case(kind: .domain, patterns: ["example.com"], text: "notexample.com my-example.com", expected: []),
        Case(kind: .domain, patterns: ["example.com"], text: "example.community example.com.evil.org", expected: []),
        Case(
            kind: .domain, patterns: ["https://Example.com/"], text: "mail bob@example.com",
            expected: [
                (0, "example.com")
            ]),
        Case(kind: .domain, patterns: ["example.com"], text: "ｅｘａｍｐｌｅ．ｃｏｍ", expected: [(0, "ｅｘａｍｐｌｅ．ｃｏｍ")]),
        Case(
            kind: .domain, patterns: ["example.com", "evil.org"], text: "evil.org, example.com",
            expected: [
                (1, "evil.org"), (0, "example.com"),
            ]),
    ]

    static let regexCases: [Case] = [
        Case(kind: .regex, patterns: ["b[a4]dw[o0]rd"], text: "B4DW0RD", expected: [(0, "B4DW0RD")]),
        Case(kind: .regex, patterns: ["a+"], text: "baaab aa", expected: [(0, "aaa"), (0, "aa")]),
        Case(kind: .regex, patterns: ["\\d{3}-\\d{4}"], text: "call 555-1234", expected: [(0, "555-1234")]),
        Case(kind: .regex, patterns: ["caf[eé]"], text: "CAFÉ", expected: [(0, "CAFÉ")]),
        Case(
            kind: .regex, patterns: ["\\bfree\\s+money\\b"], text: "FREE \t money! freemoney free moneys",
            expected: [(0, "FREE \t money")]),
        Case(
            kind: .regex, patterns: ["Buy [A-Z]+ NOW"], text: "buy pills\u{3000}now",
            expected: [(0, "buy pills\u{3000}now")]),
        Case(kind: .regex, patterns: ["a\\s\\sb"], text: "a  b a\tb", expected: []),
        Case(kind: .regex, patterns: ["\\x{61}\\QA+B\\E"], text: "AA+B", expected: [(0, "AA+B")]),
        // `\w` and `\b` are ASCII's: a Cyrillic letter is no word character to a regex.
        Case(kind: .regex, patterns: ["\\bfree\\b"], text: "жfreeж", expected: [(0, "free")]),
        Case(kind: .regex, patterns: ["\\QA+B\\E\\d\\W"], text: "xA+B1!", expected: [(0, "A+B1!")]),
        Case(kind: .regex, patterns: ["(buy|sell)\\s+now"], text: "SELL\u{A0}NOW", expected: [(0, "SELL\u{A0}NOW")]),
    ]

    @Test("Word rules", arguments: wordCases)
    func words(_ testCase: Case) throws {
        try check(testCase)
    }

    @Test("Domain rules", arguments: domainCases)
    func domains(_ testCase: Case) throws {
        try check(testCase)
    }

    @Test("Regex rules", arguments: regexCases)
    func regexes(_ testCase: Case) throws {
        try check(testCase)
    }

    @Test("Spans are byte offsets in the text as sent, after multi-byte characters too")
    func spans() throws {
        let set = try CompiledRuleSet.compile([ContentRule(id: 9, kind: .word, pattern: "badword")])
        let scanner = ContentScanner()
        // "日本 " is 7 bytes; "ｂａｄｗｏｒｄ" is 21 bytes (3 each).
        #expect(scanner.scan("日本 ｂａｄｗｏｒｄ", with: set) == [ContentMatch(ruleID: 9, start: 7, end: 28)])
        // "é" (2 bytes) + "e" + U+0301 (3 bytes), then " BÁDWORD" at 6: "Á" is 2 bytes.
        #expect(scanner.scan("ée\u{301} BÁDWORD", with: set) == [ContentMatch(ruleID: 9, start: 6, end: 14)])
        // "BA" + U+0301 (combining acute) + "DWORD": the mark belongs to the A's segment.
        #expect(scanner.scan("BA\u{301}DWORD", with: set) == [ContentMatch(ruleID: 9, start: 0, end: 9)])
        #expect(scanner.scan("badword", with: set) == [ContentMatch(ruleID: 9, start: 0, end: 7)])
    }

    @Test("Matches of several rules come in order of start")
    func order() throws {
        let rules = [
            ContentRule(id: 3, kind: .domain, pattern: "spam.com"),
            ContentRule(id: 1, kind: .word, pattern: "buy"),
            ContentRule(id: 2, kind: .regex, pattern: "[0-9]+%"),
        ]
        let set = try CompiledRuleSet.compile(rules)
        let matches = ContentScanner().scan("50% off, buy at spam.com, buy", with: set)
        #expect(matches.map(\.ruleID) == [2, 1, 3, 1])
        #expect(matches.map(\.start) == [0, 9, 16, 26])
    }

    @Test("A scan never crashes on bytes that are not UTF-8")
    func anyBytes() throws {
        let set = try CompiledRuleSet.compile([
            ContentRule(id: 1, kind: .word, pattern: "ab*"), ContentRule(id: 2, kind: .domain, pattern: "a.b"),
            ContentRule(id: 3, kind: .regex, pattern: "\\w+"),
        ])
        let scanner = ContentScanner()
        var random = SplitMix64(seed: 11)
        let alphabet: [UInt8] = [0x61, 0x62, 0x2E, 0x20, 0xC3, 0xA9, 0xFF, 0x80, 0xE2, 0xF0, 0x9F]
        for _ in 0..<2_000 {
            let bytes = (0..<Int(random.next() % 30)).map { _ in alphabet[Int(random.next() % 11)] }
            for match in scanner.scan(bytes, with: set) {
                #expect(match.start <= match.end && match.end <= bytes.count)
            }
        }
    }

    @Test("Several sets over one normalized text: each finds what it finds alone, the scratch fitting each")
    func severalSets() throws {
        let words = try CompiledRuleSet.compile([ContentRule(id: 1, kind: .word, pattern: "spam")])
        let regexes = try CompiledRuleSet.compile([
            ContentRule(id: 2, kind: .regex, pattern: "x{3,}"),
            ContentRule(id: 3, kind: .domain, pattern: "evil.example"),
        ])
        let scanner = ContentScanner()
        for text in ["SPAM xxxx at https://www.evil.example/a", "nothing", "spam", "xxx evil.example spam"] {
            let together = scanner.scan(text, with: [words, CompiledRuleSet(), regexes])
            #expect(together == [scanner.scan(text, with: words), [], scanner.scan(text, with: regexes)])
        }
    }

    @Test("An empty set and an empty text find nothing")
    func empty() throws {
        let scanner = ContentScanner()
        #expect(scanner.scan("anything", with: CompiledRuleSet()).isEmpty)
        let set = try CompiledRuleSet.compile([ContentRule(id: 1, kind: .word, pattern: "x")])
        #expect(scanner.scan("", with: set).isEmpty)
        #expect(set.databaseSize > 0)
    }

    private func check(_ testCase: Case) throws {
        let rules = testCase.patterns.enumerated().map {
            ContentRule(id: UInt64($0.offset + 1), kind: testCase.kind, pattern: $0.element)
        }
        let set = try CompiledRuleSet.compile(rules)
        #expect(set.errors.isEmpty)
        let matches = ContentScanner().scan(testCase.text, with: set)
        let bytes = Array(testCase.text.utf8)
        let found = matches.map { (Int($0.ruleID) - 1, String(decoding: bytes[$0.start..<$0.end], as: UTF8.self)) }
        #expect(found.map(\.0) == testCase.expected.map(\.0))
        #expect(found.map(\.1) == testCase.expected.map(\.1))
    }
}
