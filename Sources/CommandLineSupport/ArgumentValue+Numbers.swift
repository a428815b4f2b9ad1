/// Numbers and durations.
extension ArgumentValue {
    /// A whole number in `range`.
    public func integer(in range: ClosedRange<Int>) throws(ArgumentError) -> Int {
        guard let number = Int(text), range.contains(number) else {
            throw error("'\(text)' is not a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }

    /// A number of zero or more, fractions allowed ("0.5").
    public func nonNegativeNumber() throws(ArgumentError) -> Double {
        guard let number = Double(text), number >= 0 else { throw error("'\(text)' is not a non-negative number") }
        return number
    }

    /// A duration in seconds: "10s", "500ms", "2m", "1h", a bare number of seconds ("1.5"), or
    /// Go's `time.ParseDuration` form that ghz and grpcurl users type: units `ns`, `us` (`µs`),
    /// `ms`, `s`, `m`, `h`, several in a row ("1m30s", "1h2m3.5s").
    public func duration() throws(ArgumentError) -> Double {
        if let number = Double(text), number >= 0 { return number }
        guard let seconds = Self.unitDuration(text[...]) else {
            throw error("'\(text)' is not a duration (e.g. 10s, 500ms, 2m)")
        }
        return seconds
    }

    /// Seconds in `text`, one or more `NUMBER UNIT` parts; nil when it is not that.
    private static func unitDuration(_ text: Substring) -> Double? {
        // Longer suffixes first, so that "ms" is not read as "m".
        // Nanoseconds, so that "250000us" sums to exactly 0.25 s.
        let units: [(name: String, nanoseconds: Double)] = [
            ("ns", 1), ("us", 1e3), ("µs", 1e3), ("ms", 1e6), ("s", 1e9), ("m", 60e9), ("h", 3600e9),
        ]
        var rest = text
        var total = 0.0
        guard !rest.isEmpty else { return nil }
        while !rest.isEmpty {
            let digits = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            guard let number = Double(digits) else { return nil }
            rest = rest.dropFirst(digits.count)
            guard let unit = units.first(where: { rest.hasPrefix($0.name) }) else { return nil }
            rest = rest.dropFirst(unit.name.count)
            total += number * unit.nanoseconds
        }
        return total / 1e9
    }
}
