/// "Did you mean …?" for mistyped names: fields, enum values and methods in hand-written JSON
/// and symbols (rpc-probe), flags and config settings (the server, rpc-probe).
///
/// A misspelt name is the most common mistake in hand-written input; naming the closest real
/// name turns a dead end into a one-character fix. A name cut short
/// (`moderation.v1.Moderation.Kick`) is completed within its scope (`…KickMember`) rather than
/// matched to the shorter name it is closest to by edits (the service).
public enum Suggestion {
    /// At most this many names are offered at once.
    public static let maximumOffered = 6

    /// The names to offer for `name`, best first: the same name in another letter case; else
    /// the names of the same scope (the part before the last dot) whose last component `name`'s
    /// last component begins; else the names that end in "_" + `name` (an enum value given
    /// without its prefix); else, for a name without a scope, the names whose last component is
    /// it or begins with it; else the one closest by edits, when it is a plausible typo.
    public static func offers(for name: String, among candidates: [String]) -> [String] {
        let lowered = name.lowercased()
        if let sameLetters = candidates.first(where: { $0 != name && $0.lowercased() == lowered }) {
            return [sameLetters]
        }
        let (scope, last) = split(lowered)
        let completions = candidates.filter { candidate in
            let (candidateScope, candidateLast) = split(candidate.lowercased())
            return candidateScope == scope && candidateLast.hasPrefix(last) && candidateLast != last
        }
        if !completions.isEmpty { return Array(completions.sorted().prefix(maximumOffered)) }
        // An enum value without its prefix: "PUBLIC" for GROUP_TYPE_PUBLIC.
        let prefixed = candidates.filter { $0.lowercased().hasSuffix("_" + lowered) }
        if !prefixed.isEmpty { return Array(prefixed.sorted().prefix(maximumOffered)) }
        if scope.isEmpty && !last.isEmpty {
            let named = candidates.filter { split($0.lowercased()).last == last }
            if !named.isEmpty { return Array(named.sorted().prefix(maximumOffered)) }
            let begun = candidates.filter { split($0.lowercased()).last.hasPrefix(last) }
            if !begun.isEmpty { return Array(begun.sorted().prefix(maximumOffered)) }
        }
        return closest(to: name, among: candidates).map { [$0] } ?? []
    }

    /// " (did you mean "A"?)", " (did you mean one of "A", "B"?)", or "" when nothing is offered.
    /// - Parameter quote: how a name is written in the message (JSON quoting, or plain quotes).
    public static func hint(
        for name: String, among candidates: [String], quote: (String) -> String = { "\"\($0)\"" }
    ) -> String {
        let offered = offers(for: name, among: candidates)
        switch offered.count {
        case 0: return ""
        case 1: return " (did you mean \(quote(offered[0]))?)"
        default: return " (did you mean one of \(offered.map(quote).joined(separator: ", "))?)"
        }
    }

    /// The candidate closest to `name` (letter case ignored, a swap of neighbours counted as one
    /// edit), when it is close enough to be a plausible typo.
    public static func closest(to name: String, among candidates: [String]) -> String? {
        let target = Array(name.lowercased().unicodeScalars)
        var best: (name: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(target, Array(candidate.lowercased().unicodeScalars))
            if distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        guard let best else { return nil }
        let allowed = max(2, min(target.count, best.name.unicodeScalars.count) / 3)
        return best.distance <= allowed ? best.name : nil
    }

    /// "a.b.C" as ("a.b", "C"); a name without a dot has an empty scope.
    private static func split(_ name: String) -> (scope: Substring, last: Substring) {
        guard let dot = name.lastIndex(of: ".") else { return ("", name[...]) }
        return (name[..<dot], name[name.index(after: dot)...])
    }

    /// Optimal-string-alignment distance: insertions, deletions, substitutions, adjacent swaps.
    private static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previous2[j - 2] + 1)
                }
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }
}
