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

    /// A duration in seconds: "10s", "500ms", "2m", "1h", or a bare number of seconds.
    public func duration() throws(ArgumentError) -> Double {
        let units: [(suffix: String, seconds: Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        for unit in units where text.hasSuffix(unit.suffix) {
            if let number = Double(text.dropLast(unit.suffix.count)), number >= 0 { return number * unit.seconds }
        }
        if let number = Double(text), number >= 0 { return number }
        throw error("'\(text)' is not a duration (e.g. 10s, 500ms, 2m)")
    }
}
