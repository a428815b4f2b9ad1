internal import CSystemShims
public import RPCCore

/// The monotonic clock in nanoseconds.
public func monotonicNow() -> UInt64 { cshim_monotonic_ns() }

/// The system's monotonic clock (`CLOCK_MONOTONIC`), what a server runs on unless a test gives it
/// a `ManualClock`.
public final class SystemClock: ServerClock {
    /// The one system clock (it keeps nothing).
    public static let shared = SystemClock()

    private init() {}

    public var now: UInt64 { cshim_monotonic_ns() }
}

/// Wall-clock time in Unix milliseconds.
public func unixMillisecondsNow() -> Int64 { cshim_realtime_ms() }

/// CPUs this process may run on (its affinity mask), at least 1.
public func usableCPUCount() -> Int { Int(cshim_usable_cpu_count()) }

/// Resident memory of this process, in bytes.
public func residentMemoryBytes() -> UInt64 { cshim_resident_bytes() }

/// CPU time used by this process so far (user + system), in nanoseconds.
public func processCPUNanoseconds() -> UInt64 { cshim_process_cpu_ns() }
