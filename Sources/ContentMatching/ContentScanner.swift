internal import CHyperscan

/// Scans texts against compiled rule sets: one scanner per thread, never shared.
///
/// It owns the thread's Hyperscan scratch space (grown with `hs_alloc_scratch` the first time it
/// meets a set whose database needs more, so one scratch serves every set it has seen), the
/// normalizer and the buffers of the last scan. The caller passes it in rather than the engine
/// finding it in thread-local storage: the service's worker threads each make one, tests make
/// their own, and its lifetime is plain to see.
public final class ContentScanner {
    private let normalizer = TextNormalizer()
    private var normalized = NormalizedText()
    private var scratch: OpaquePointer?
    /// The serials of the sets the scratch is known to fit.
    private var preparedSerials = Set<UInt64>()
    private var hits: [Hit] = []
    /// For the host checks: where the host name that ends a domain's labels starts (memoized).
    private var hostStarts: [Int32] = []
    /// For the wildcards: at each scalar boundary, where the run of word characters that ends
    /// there starts, and where the run that starts there ends.
    private var wordRunStarts: [Int32] = []
    private var wordRunEnds: [Int32] = []

    /// One match as Hyperscan reports it, over the normalized text.
    private struct Hit {
        var entry: UInt32
        var from: UInt32
        var to: UInt32
    }

    /// A match over the normalized text that passed its checks.
    private struct Candidate {
        var entry: Int
        var start: Int
        var end: Int
    }

    public init() {}

    deinit {
        if let scratch { hs_free_scratch(scratch) }
    }

    /// The matches of `set`'s rules in `text`, as byte offsets into `text`, in order of start.
    ///
    /// For each rule, Hyperscan's matches become the leftmost-longest ones that do not overlap:
    /// a word rule matches each occurrence of the word once, a regex like `a+` covers the whole
    /// run. Time is linear in the text for any set (Hyperscan's guarantee, and the checks look at
    /// one or two characters per match). Any bytes are accepted: those that are not UTF-8 read as
    /// U+FFFD.
    public func scan(_ text: UnsafeBufferPointer<UInt8>, with set: CompiledRuleSet) -> [ContentMatch] {
        scan(text, with: [set])[0]
    }

    /// The matches of each set's rules in `text`, one list per set in the order given: the text
    /// is normalized once for all of them.
    public func scan(_ text: UnsafeBufferPointer<UInt8>, with sets: [CompiledRuleSet]) -> [[ContentMatch]] {
        guard !text.isEmpty, sets.contains(where: { $0.database != nil }) else {
            return Array(repeating: [], count: sets.count)
        }
        normalizer.normalize(text, into: &normalized)
        return sets.map(scanNormalized)
    }

    /// The matches of each set's rules in `text` (offsets into its UTF-8), one list per set.
    public func scan(_ text: String, with sets: [CompiledRuleSet]) -> [[ContentMatch]] {
        var text = text
        return text.withUTF8 { scan($0, with: sets) }
    }

    /// One set's matches in the text normalized last.
    private func scanNormalized(with set: CompiledRuleSet) -> [ContentMatch] {
        guard let database = set.database, !normalized.bytes.isEmpty else { return [] }
        prepareScratch(for: set, database: database)
        hits.removeAll(keepingCapacity: true)
        let status = withUnsafeMutablePointer(to: &hits) { hitsPointer in
            normalized.bytes.withUnsafeBufferPointer { bytes in
                hs_scan(
                    database, bytes.baseAddress, UInt32(bytes.count), 0, scratch,
                    { entry, from, to, _, context in
                        let hits = context!.assumingMemoryBound(to: [Hit].self)
                        hits.pointee.append(Hit(entry: entry, from: UInt32(from), to: UInt32(to)))
                        return 0
                    }, hitsPointer)
            }
        }
        precondition(status == HS_SUCCESS, "hs_scan failed with status \(status)")
        return matches(in: set)
    }

    /// The matches of `set`'s rules in `text`.
    public func scan(_ text: [UInt8], with set: CompiledRuleSet) -> [ContentMatch] {
        text.withUnsafeBufferPointer { scan($0, with: set) }
    }

    /// The matches of `set`'s rules in `text` (offsets into its UTF-8).
    public func scan(_ text: String, with set: CompiledRuleSet) -> [ContentMatch] {
        var text = text
        return text.withUTF8 { scan($0, with: set) }
    }

    /// Makes the scratch big enough for `set`'s database, once per set (a scratch only grows, so
    /// one that fitted a set fits it for good; the record is forgotten now and then, as sets are
    /// replaced).
    private func prepareScratch(for set: CompiledRuleSet, database: OpaquePointer) {
        guard !preparedSerials.contains(set.serial) else { return }
        let status = hs_alloc_scratch(database, &scratch)
        precondition(status == HS_SUCCESS, "hs_alloc_scratch failed with status \(status)")
        if preparedSerials.count >= 256 { preparedSerials.removeAll(keepingCapacity: true) }
        preparedSerials.insert(set.serial)
    }

    /// Checks the hits, keeps each rule's leftmost-longest non-overlapping ones and maps them
    /// back to the original text.
    private func matches(in set: CompiledRuleSet) -> [ContentMatch] {
        var candidates: [Candidate] = []
        var hostStartsReady = false
        var runsReady = false
        for hit in hits {
            let entry = set.entries[Int(hit.entry)]
            var end = Int(hit.to)
            var start = entry.fixedLength.map { end - $0 } ?? Int(hit.from)
            switch entry.check {
            case .none:
                break
            case .word(let prefix, let suffix):
                guard prefix || !normalized.isWord(before: start), suffix || !normalized.isWord(at: end) else {
                    continue
                }
                if prefix || suffix {
                    if !runsReady {
                        findRuns()
                        runsReady = true
                    }
                    if prefix { start = Int(wordRunStarts[start]) }
                    if suffix { end = Int(wordRunEnds[end]) }
                }
            case .host:
                guard !isHost(before: start), endsHost(at: end) else { continue }
                if !hostStartsReady {
                    hostStarts.removeAll(keepingCapacity: true)
                    hostStarts.append(contentsOf: repeatElement(-1, count: normalized.bytes.count + 1))
                    hostStartsReady = true
                }
                start = hostStart(from: start)
            }
            candidates.append(Candidate(entry: Int(hit.entry), start: start, end: end))
        }
        candidates.sort { ($0.entry, $0.start, $1.end) < ($1.entry, $1.start, $0.end) }
        var result: [ContentMatch] = []
        var previous: Candidate?
        for candidate in candidates {
            if let previous, previous.entry == candidate.entry, candidate.start < previous.end { continue }
            previous = candidate
            let range = normalized.originalRange(of: candidate.start..<candidate.end)
            result.append(
                ContentMatch(
                    ruleID: set.entries[candidate.entry].ruleID, start: range.lowerBound, end: range.upperBound))
        }
        result.sort { ($0.start, $0.end, $0.ruleID) < ($1.start, $1.end, $1.ruleID) }
        var unique: [ContentMatch] = []
        unique.reserveCapacity(result.count)
        for match in result where unique.last != match { unique.append(match) }
        return unique
    }

    /// Fills `wordRunStarts` and `wordRunEnds` for the normalized text, in two linear passes.
    private func findRuns() {
        let count = normalized.bytes.count
        wordRunStarts.removeAll(keepingCapacity: true)
        wordRunStarts.append(contentsOf: repeatElement(0, count: count + 1))
        wordRunEnds.removeAll(keepingCapacity: true)
        wordRunEnds.append(contentsOf: repeatElement(Int32(count), count: count + 1))
        var boundaries: [Int] = [0]
        var words: [Bool] = []
        var index = 0
        while index < count {
            let (scalar, length) = normalized.scalar(at: index)
            words.append(WordCharacters.isWord(scalar))
            index += length
            boundaries.append(index)
        }
        for (position, boundary) in boundaries.enumerated().dropFirst() {
            let previous = boundaries[position - 1]
            wordRunStarts[boundary] = words[position - 1] ? wordRunStarts[previous] : Int32(boundary)
        }
        for position in boundaries.indices.reversed().dropFirst() {
            let boundary = boundaries[position]
            wordRunEnds[boundary] = words[position] ? wordRunEnds[boundaries[position + 1]] : Int32(boundary)
        }
    }

    private func isHost(before index: Int) -> Bool {
        index > 0 && WordCharacters.isHost(normalized.scalar(before: index).value)
    }

    private func isHost(at index: Int) -> Bool {
        index < normalized.bytes.count && WordCharacters.isHost(normalized.scalar(at: index).value)
    }

    /// Whether a host name ends at `index`: no host character follows, nor a dot and one.
    private func endsHost(at index: Int) -> Bool {
        if isHost(at: index) { return false }
        return
            !(index < normalized.bytes.count && normalized.bytes[index] == UInt8(ascii: ".")
            && isHost(at: index + 1))
    }

    /// Where the host name whose labels end just before `index` starts: back over `label.` as
    /// long as there are any. Memoized per position, so all the checks of one scan take time
    /// linear in the text.
    private func hostStart(from index: Int) -> Int {
        var position = index
        var visited: [Int] = []
        while position > 0 && normalized.bytes[position - 1] == UInt8(ascii: ".") {
            if hostStarts[position] >= 0 {
                position = Int(hostStarts[position])
                break
            }
            visited.append(position)
            var labelStart = position - 1
            while isHost(before: labelStart) { labelStart = normalized.scalar(before: labelStart).start }
            if labelStart == position - 1 { break }
            position = labelStart
        }
        for visited in visited { hostStarts[visited] = Int32(position) }
        return position
    }
}
