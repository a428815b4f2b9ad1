internal import CHyperscan

/// One rule as Hyperscan compiles it: the expression over normalized text, its flags, and what
/// the scanner still checks around each match Hyperscan reports.
///
/// Hyperscan has no lookaround, so the conditions on the characters beside a word or host are
/// checked on the normalized text after the match (one or two characters each, so the scan stays
/// linear), and a word rule's wildcards are not compiled at all: the scanner widens the match to
/// the whole word. Only regexes compile with start-of-match tracking (`HS_FLAG_SOM_LEFTMOST`),
/// which costs dearly at compile time and refuses some expressions as "too large". A word, a
/// phrase (its words joined by one space, as the normalized text has every run of white space)
/// or a domain is a literal of fixed byte length, so its start is its end minus that length.
///
/// A regex reads the normalized text too, where each run of white space is one space; it
/// compiles case-insensitively (`HS_FLAG_CASELESS` costs nothing measurable, and spares lowering
/// its letters around escapes like `\W` or `\x{4A}`) and without `HS_FLAG_UCP`, so `\w`, `\d`,
/// `\s` and `\b` are ASCII's: with accents removed and white space one space they mostly mean
/// the same, and Unicode mode refuses `\b` outright (`\bfree\s+money\b`) and made the app's
/// largest set compile 1.2 to 1.7 times slower.
struct RuleExpression {
    /// What the scanner checks around a match.
    enum Check {
        /// Nothing: a regex means what it says.
        case none
        /// No word character just before the start or just after the end; with a wildcard on a
        /// side, the match grows on that side to the end of the word instead.
        case word(prefix: Bool, suffix: Bool)
        /// The match ends a host name (no host character, nor a dot and one, after it), is not
        /// preceded by a host character, and its span grows left over the subdomain's labels.
        case host
    }

    var expression: String
    var flags: UInt32
    var check: Check
    /// The byte length of every match, when it is fixed (no start-of-match tracking then).
    var fixedLength: Int?

    /// Translates `rule`, its pattern normalized as the text will be.
    static func make(for rule: ContentRule, normalizer: TextNormalizer) throws(ContentRuleError) -> RuleExpression {
        func refuse(_ reason: String) -> ContentRuleError {
            ContentRuleError(ruleID: rule.id, pattern: rule.pattern, reason: reason)
        }
        switch rule.kind {
        case .word:
            var words = split(normalizer.normalize(rule.pattern))
            guard !words.isEmpty else { throw refuse("a word rule needs at least one word") }
            let prefix = words[0].hasPrefix("*")
            let suffix = words[words.count - 1].hasSuffix("*")
            if prefix { words[0].removeFirst() }
            if suffix && !words[words.count - 1].isEmpty { words[words.count - 1].removeLast() }
            guard !words.contains(where: \.isEmpty) else {
                throw refuse("a * stands for a word's prefix or suffix: it needs characters beside it")
            }
            let literal = words.joined(separator: " ")
            return RuleExpression(
                expression: escape(literal), flags: flagsUTF8, check: .word(prefix: prefix, suffix: suffix),
                fixedLength: literal.utf8.count)
        case .domain:
            let host = hostName(normalizer.normalize(rule.pattern))
            let labels = host.split(separator: ".", omittingEmptySubsequences: false)
            guard !host.isEmpty, !labels.contains(where: \.isEmpty),
                host.unicodeScalars.allSatisfy({ $0 == "." || WordCharacters.isHost($0) })
            else { throw refuse("not a domain name: labels of letters, digits, - and _ separated by dots") }
            return RuleExpression(
                expression: labels.map { escape(String($0)) }.joined(separator: "\\."), flags: flagsUTF8,
                check: .host, fixedLength: host.utf8.count)
        case .regex:
            return RuleExpression(
                expression: normalizeRegex(rule.pattern, normalizer: normalizer),
                flags: flagsUTF8 | flagsSOM | flagsCaseless, check: .none, fixedLength: nil)
        }
    }

    private static let flagsUTF8 = UInt32(HS_FLAG_UTF8)
    private static let flagsSOM = UInt32(HS_FLAG_SOM_LEFTMOST)
    private static let flagsCaseless = UInt32(HS_FLAG_CASELESS)

    /// The words of a normalized pattern, split at its spaces (all its white space, normalized).
    private static func split(_ text: String) -> [String] {
        var words: [String] = []
        var word = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar == " " {
                if !word.isEmpty { words.append(String(word)) }
                word = String.UnicodeScalarView()
            } else {
                word.append(scalar)
            }
        }
        if !word.isEmpty { words.append(String(word)) }
        return words
    }

    /// The host of a domain pattern written as a link: scheme, user, port, path and a leading
    /// `*.` or trailing dot left out.
    private static func hostName(_ pattern: String) -> String {
        var host = Substring(pattern.trimmingWhitespace)
        if let scheme = host.firstRange(of: "://") { host = host[scheme.upperBound...] }
        if let slash = host.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) { host = host[..<slash] }
        if let at = host.lastIndex(of: "@") { host = host[host.index(after: at)...] }
        if let colon = host.firstIndex(of: ":") { host = host[..<colon] }
        if host.hasPrefix("*.") { host = host.dropFirst(2) }
        while host.hasSuffix(".") { host = host.dropLast() }
        return String(host)
    }

    /// `literal` as a Hyperscan expression that matches exactly it.
    static func escape(_ literal: String) -> String {
        var expression = ""
        for scalar in literal.unicodeScalars {
            switch scalar.value {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: expression.unicodeScalars.append(scalar)
            case 0x21...0x7E:
                expression += "\\"
                expression.unicodeScalars.append(scalar)
            case 0..<0x80: expression += "\\x{\(String(scalar.value, radix: 16))}"
            default: expression.unicodeScalars.append(scalar)
            }
        }
        return expression
    }

    /// A regex with its non-ASCII runs normalized as the text is (its ASCII, escapes and all, is
    /// kept: it compiles case-insensitively instead).
    private static func normalizeRegex(_ pattern: String, normalizer: TextNormalizer) -> String {
        var result = ""
        var run = String.UnicodeScalarView()
        for scalar in pattern.unicodeScalars {
            if scalar.isASCII {
                if !run.isEmpty { result += normalizer.normalize(String(run)) }
                run = String.UnicodeScalarView()
                result.unicodeScalars.append(scalar)
            } else {
                run.append(scalar)
            }
        }
        if !run.isEmpty { result += normalizer.normalize(String(run)) }
        return result
    }
}

extension String {
    fileprivate var trimmingWhitespace: Substring {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return Substring(scalars[first...last])
    }
}
