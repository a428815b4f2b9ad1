/// Walks a command line: flags with values (`--flag value`, `--flag=value`), switches, and
/// positional arguments, with errors that name the flag.
struct ArgumentReader {
    private var remaining: [String]

    init(_ arguments: [String]) { remaining = arguments }

    var isEmpty: Bool { remaining.isEmpty }

    /// The next argument when it is not a flag.
    mutating func positional() -> String? {
        guard let first = remaining.first, !first.hasPrefix("-") || first == "-" else { return nil }
        return remaining.removeFirst()
    }

    /// The next argument when it is a flag: its name and, for `--name=value`, the value.
    mutating func flag() -> (name: String, inlineValue: String?)? {
        guard let first = remaining.first, first.hasPrefix("-"), first != "-" else { return nil }
        remaining.removeFirst()
        if first.hasPrefix("--"), let equals = first.firstIndex(of: "=") {
            return (String(first[..<equals]), String(first[first.index(after: equals)...]))
        }
        return (first, nil)
    }

    /// The value of flag `name` (inline or the next argument).
    mutating func value(for name: String, inline: String?) throws(ProbeError) -> String {
        if let inline { return inline }
        guard !remaining.isEmpty else { throw .usage("\(name) needs a value") }
        return remaining.removeFirst()
    }

    mutating func int(for name: String, inline: String?, range: ClosedRange<Int>) throws(ProbeError) -> Int {
        let text = try value(for: name, inline: inline)
        guard let value = Int(text), range.contains(value) else {
            throw .usage("\(name): '\(text)' is not a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    mutating func double(for name: String, inline: String?) throws(ProbeError) -> Double {
        let text = try value(for: name, inline: inline)
        guard let value = Double(text), value >= 0 else { throw .usage("\(name): '\(text)' is not a non-negative number") }
        return value
    }

    /// A duration like "10s", "500ms", "2m" or a bare number of seconds, in seconds.
    mutating func duration(for name: String, inline: String?) throws(ProbeError) -> Double {
        let text = try value(for: name, inline: inline)
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            if let value = Double(text.dropLast(suffix.count)), value >= 0 { return value * scale }
        }
        if let value = Double(text), value >= 0 { return value }
        throw .usage("\(name): '\(text)' is not a duration (e.g. 10s, 500ms, 2m)")
    }
}
