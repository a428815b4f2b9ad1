/// gRPC's `grpc-timeout` header: at most eight ASCII digits and a unit (`H` hours, `M` minutes,
/// `S` seconds, `m` milliseconds, `u` microseconds, `n` nanoseconds), e.g. `100m`.
///
/// It is the call's deadline on this listener, as `CallHeader.timeout_ms` is on ours.
public enum GRPCTimeout {
    /// The timeout in nanoseconds, or nil when `text` is not a valid `grpc-timeout` value.
    public static func nanoseconds(_ text: String) -> UInt64? {
        let utf8 = Array(text.utf8)
        guard (2...9).contains(utf8.count) else { return nil }
        var value: UInt64 = 0
        for digit in utf8.dropLast() {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
            value = value * 10 + UInt64(digit - UInt8(ascii: "0"))
        }
        let unit: UInt64
        switch utf8.last! {
        case UInt8(ascii: "H"): unit = 3_600_000_000_000
        case UInt8(ascii: "M"): unit = 60_000_000_000
        case UInt8(ascii: "S"): unit = 1_000_000_000
        case UInt8(ascii: "m"): unit = 1_000_000
        case UInt8(ascii: "u"): unit = 1_000
        case UInt8(ascii: "n"): unit = 1
        default: return nil
        }
        // 99 999 999 hours is far past any deadline a call may keep: saturate instead of overflowing.
        let (product, overflow) = value.multipliedReportingOverflow(by: unit)
        return overflow ? UInt64.max / 2 : product
    }

    /// The `grpc-timeout` value for `milliseconds`: in milliseconds while that fits in eight
    /// digits, else in seconds (rounded up, so the deadline is never shorter than asked).
    public static func text(milliseconds: UInt64) -> String {
        if milliseconds <= 99_999_999 { return "\(milliseconds)m" }
        return "\(min((milliseconds + 999) / 1000, 99_999_999))S"
    }
}
