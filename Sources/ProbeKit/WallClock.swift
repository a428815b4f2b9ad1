internal import Glibc
import RPCCore

/// The time of day, for what bench writes into requests (`{{.TimestampUnix}}`) and reports
/// (the HTML report's date); durations are measured on the monotonic clock, never on this one.
enum WallClock {
    /// Seconds and nanoseconds since the epoch.
    static func now() -> (seconds: Int, nanoseconds: Int) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return (now.tv_sec, now.tv_nsec)
    }

    /// `seconds` since the epoch as RFC 3339 in UTC: `2026-03-01T12:00:00Z`.
    static func rfc3339(seconds: Int) -> String {
        var bytes: [UInt8] = []
        LogTime.appendUTCSecond(seconds, to: &bytes) // "2026-03-01T12:00:00."
        bytes[bytes.count - 1] = UInt8(ascii: "Z")
        return String(decoding: bytes, as: UTF8.self)
    }
}
