/// Exact conversion of JSON number text to integers.
///
/// proto3 JSON carries 64-bit integers as strings or numbers; going through `Double` would lose
/// everything above 2^53. This works on the decimal digits instead: "1e3", "1.50e2" and "-0" are
/// integers, "1.5" is not, and anything beyond 64 bits is out of range rather than rounded.
enum JSONNumber {
    /// What a number literal holds, as an integer.
    enum Integer: Equatable {
        /// The value: its sign and magnitude (at most `UInt64.max`).
        case value(negative: Bool, magnitude: UInt64)
        /// The number has a non-zero fractional part.
        case notAnInteger
        /// The magnitude needs more than 64 bits.
        case tooLarge
    }

    /// The integer value of a literal that already matches the JSON number grammar.
    static func integer(_ literal: String) -> Integer {
        let bytes = Array(literal.utf8)
        func isDigit(_ i: Int) -> Bool {
            i < bytes.count && bytes[i] >= UInt8(ascii: "0") && bytes[i] <= UInt8(ascii: "9")
        }
        var i = 0
        let negative = bytes.first == UInt8(ascii: "-")
        if negative { i += 1 }
        var digits: [UInt8] = []
        var exponent = 0
        while isDigit(i) {
            digits.append(bytes[i] - UInt8(ascii: "0"))
            i += 1
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            while isDigit(i) {
                digits.append(bytes[i] - UInt8(ascii: "0"))
                exponent -= 1
                i += 1
            }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            var exponentNegative = false
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") {
                exponentNegative = bytes[i] == UInt8(ascii: "-")
                i += 1
            }
            var value = 0
            while isDigit(i) {
                // Saturate: no count of digits we could hold brings 10^1000000 back into range.
                value = min(value * 10 + Int(bytes[i] - UInt8(ascii: "0")), 1_000_000)
                i += 1
            }
            exponent += exponentNegative ? -value : value
        }
        // value = digits × 10^exponent; drop leading zeros, and move trailing zeros into the exponent.
        guard let first = digits.firstIndex(where: { $0 != 0 }), let last = digits.lastIndex(where: { $0 != 0 }) else {
            return .value(negative: negative, magnitude: 0)
        }
        exponent += digits.count - 1 - last
        digits = Array(digits[first...last])
        guard exponent >= 0 else { return .notAnInteger }
        guard digits.count + exponent <= 20 else { return .tooLarge }
        var magnitude: UInt64 = 0
        for digit in digits + Array(repeating: 0, count: exponent) {
            let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(digit))
            guard !overflow1, !overflow2 else { return .tooLarge }
            magnitude = sum
        }
        return .value(negative: negative, magnitude: magnitude)
    }
}
