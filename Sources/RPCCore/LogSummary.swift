import Synchronization

/// A warning a peer can make repeat as fast as it connects (accept failing, connections
/// refused), logged at most once per interval with the count since the last line: the first
/// occurrence is logged at once, the rest are counted.
///
/// Lock-free, usable from every loop: two atomics per occurrence.
public final class LogSummary: Sendable {
    private let intervalNanoseconds: UInt64
    private let count = Atomic<Int>(0)
    /// When the last line was logged (0: never).
    private let lastLine = Atomic<UInt64>(0)

    public init(intervalNanoseconds: UInt64) {
        self.intervalNanoseconds = intervalNanoseconds
    }

    /// Counts one occurrence at `now` (monotonic nanoseconds).
    /// - Returns: the occurrences to report (this one included) when a line is due now, else nil.
    public func record(now: UInt64) -> Int? {
        count.add(1, ordering: .relaxed)
        let last = lastLine.load(ordering: .relaxed)
        if last != 0 && now &- last < intervalNanoseconds { return nil }
        guard lastLine.compareExchange(expected: last, desired: max(now, 1), ordering: .relaxed).exchanged else {
            return nil
        }
        return count.exchange(0, ordering: .relaxed)
    }
}
