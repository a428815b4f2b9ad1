import ContentMatching

/// A slow matcher for word and domain rules that is easy to check by reading: it cuts the
/// normalized text into words and host names, then compares strings.
///
/// Word: the text's words (maximal runs of letters, numbers and `_`) one after another with only
/// white space between them (any White_Space, not only the one space the normalizer leaves of a
/// run, so that a normalizer that left runs whole would be caught), each equal to the pattern's word, or ending with it (a `*` before
/// it) or starting with it (a `*` after it). Domain: the text's host names (maximal runs of
/// labels, each a run of word characters and `-`, joined by single dots) equal to the domain or
/// ending with a dot and the domain. Each rule keeps its leftmost-longest matches that do not
/// overlap, as the engine documents.
enum ReferenceMatcher {
    /// A run of scalars in the normalized text, with its bytes and byte range.
    struct Run {
        var bytes: [UInt8]
        var start: Int
        var end: Int
    }

    static func matches(of rules: [ContentRule], in normalized: NormalizedText) -> [ContentMatch] {
        let scalars = decode(normalized.bytes)
        let words = runs(of: scalars, in: normalized.bytes, where: isWord)
        let hosts = hostNames(scalars: scalars, in: normalized.bytes)
        let normalizer = TextNormalizer()
        var result: [ContentMatch] = []
        for rule in rules {
            var spans: [(Int, Int)] = []
            switch rule.kind {
            case .word:
                spans = wordSpans(pattern: normalizer.normalize(rule.pattern), words: words, text: normalized.bytes)
            case .domain:
                let domain = Array(normalizer.normalize(rule.pattern).utf8)
                spans = hosts.filter { $0.bytes == domain || $0.bytes.hasSuffix([UInt8(ascii: ".")] + domain) }
                    .map { ($0.start, $0.end) }
            case .regex:
                preconditionFailure("the reference matcher has no regexes")
            }
            spans.sort { ($0.0, $1.1) < ($1.0, $0.1) }
            var lastEnd = -1
            for (start, end) in spans where start >= lastEnd {
                lastEnd = end
                let range = normalized.originalRange(of: start..<end)
                result.append(ContentMatch(ruleID: rule.id, start: range.lowerBound, end: range.upperBound))
            }
        }
        result.sort { ($0.start, $0.end, $0.ruleID) < ($1.start, $1.end, $1.ruleID) }
        var unique: [ContentMatch] = []
        for match in result where unique.last != match { unique.append(match) }
        return unique
    }

    static func isWord(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || scalar.properties.numericType != nil
            || [.uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter].contains(
                scalar.properties.generalCategory)
    }

    private static func wordSpans(pattern: String, words: [Run], text: [UInt8]) -> [(Int, Int)] {
        var parts = pattern.split(whereSeparator: { $0.isWhitespace }).map { Array($0.utf8) }
        let prefix = parts.first?.first == UInt8(ascii: "*")
        let suffix = parts.last?.last == UInt8(ascii: "*")
        if prefix { parts[0].removeFirst() }
        if suffix { parts[parts.count - 1].removeLast() }
        var spans: [(Int, Int)] = []
        for first in words.indices where first + parts.count <= words.count {
            let candidate = words[first..<first + parts.count]
            var matches = true
            for (offset, word) in candidate.enumerated() {
                let part = parts[offset]
                let atStart = offset == 0 && prefix
                let atEnd = offset == parts.count - 1 && suffix
                let fits =
                    atStart && atEnd
                    ? word.bytes.contains(part)
                    : atStart ? word.bytes.hasSuffix(part) : atEnd ? word.bytes.starts(with: part) : word.bytes == part
                let gapIsSpace =
                    offset == 0
                    || decode(Array(text[words[first + offset - 1].end..<word.start])).allSatisfy {
                        $0.scalar.properties.isWhitespace
                    }
                if !fits || !gapIsSpace {
                    matches = false
                    break
                }
            }
            if matches { spans.append((candidate.first!.start, candidate.last!.end)) }
        }
        return spans
    }

    private static func hostNames(scalars: [(scalar: Unicode.Scalar, start: Int, end: Int)], in text: [UInt8]) -> [Run]
    {
        let labels = runs(of: scalars, in: text) { $0 == "-" || isWord($0) }
        var hosts: [Run] = []
        for label in labels {
            if var last = hosts.last, last.end + 1 == label.start, text[last.end] == UInt8(ascii: ".") {
                last.bytes += [UInt8(ascii: ".")] + label.bytes
                last.end = label.end
                hosts[hosts.count - 1] = last
            } else {
                hosts.append(label)
            }
        }
        return hosts
    }

    private static func runs(
        of scalars: [(scalar: Unicode.Scalar, start: Int, end: Int)], in text: [UInt8],
        where belongs: (Unicode.Scalar) -> Bool
    ) -> [Run] {
        var result: [Run] = []
        var current: Run?
        for (scalar, start, end) in scalars {
            if belongs(scalar) {
                if current == nil { current = Run(bytes: [], start: start, end: start) }
                current!.bytes += text[start..<end]
                current!.end = end
            } else if let run = current {
                result.append(run)
                current = nil
            }
        }
        if let current { result.append(current) }
        return result
    }

    private static func decode(_ bytes: [UInt8]) -> [(scalar: Unicode.Scalar, start: Int, end: Int)] {
        var result: [(scalar: Unicode.Scalar, start: Int, end: Int)] = []
        var offset = 0
        for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars {
            let length = UTF8.width(scalar)
            result.append((scalar, offset, offset + length))
            offset += length
        }
        return result
    }
}

extension Array where Element == UInt8 {
    func hasSuffix(_ suffix: [UInt8]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }

    func contains(_ part: [UInt8]) -> Bool {
        guard part.count <= count else { return false }
        return (0...(count - part.count)).contains { Array(self[$0..<$0 + part.count]) == part }
    }
}
