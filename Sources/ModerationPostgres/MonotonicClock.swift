internal import Glibc

/// The monotonic clock in nanoseconds: `CLOCK_MONOTONIC`, as `CallContext.receivedAt`.
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// The monotonic clock in seconds, for timing commits.
func monotonicSeconds() -> Double {
    Double(monotonicNanoseconds()) / 1e9
}
