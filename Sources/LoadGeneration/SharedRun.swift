import Synchronization

/// Run-wide timing and numbering shared by the client threads.
///
/// Every call takes its request number from one counter, whatever thread sends it, so request
/// `k` is the `k`-th call sent (warm-up included) and uses body `k % bodies`: with as many
/// bodies as calls, no two calls send the same body. A `total` run sends exactly `total` calls
/// once warm-up is over (ghz's `-n`): more would reach the server without being measured.
final class SharedRun: Sendable {
    let warmupEnd: UInt64
    let measureEnd: UInt64
    let total: Int?
    private let measured = Atomic<Int>(0)
    private let warmup = Atomic<Int>(0)
    private let stopAt = Atomic<UInt64>(0)
    /// Calls sent, warm-up included: the next request number.
    private let sent = Atomic<Int>(0)
    /// Calls sent once warm-up was over (what `total` limits).
    private let sentMeasured = Atomic<Int>(0)

    init(warmupEnd: UInt64, measureEnd: UInt64, total: Int?) {
        self.warmupEnd = warmupEnd
        self.measureEnd = measureEnd
        self.total = total
    }

    var measureStart: UInt64 { warmupEnd }
    var measureStop: UInt64 { stopAt.load(ordering: .acquiring) }
    var warmupCalls: UInt64 { UInt64(warmup.load(ordering: .relaxed)) }
    /// Every call sent, warm-up included.
    var sentCalls: UInt64 { UInt64(sent.load(ordering: .relaxed)) }

    /// The number of the next call to send at `now`; nil when a `total` run has sent all its
    /// calls.
    func nextRequest(at now: UInt64) -> Int? {
        if let total, now >= warmupEnd {
            guard sentMeasured.add(1, ordering: .relaxed).oldValue < total else { return nil }
        }
        return sent.add(1, ordering: .relaxed).oldValue
    }

    /// True once a `total` run has sent all its calls: what is in flight is all that is left.
    var allSent: Bool {
        guard let total else { return false }
        return sentMeasured.load(ordering: .relaxed) >= total
    }

    /// Counts a completed call; returns whether it is measured and whether the run is over.
    func complete(at now: UInt64) -> (measured: Bool, done: Bool) {
        if now < warmupEnd {
            warmup.add(1, ordering: .relaxed)
            return (false, false)
        }
        if let total {
            let n = measured.add(1, ordering: .relaxed).newValue
            if n == total { stopAt.store(now, ordering: .releasing) }
            return (n <= total, n >= total)
        }
        if now >= measureEnd {
            _ = stopAt.compareExchange(expected: 0, desired: measureEnd, ordering: .acquiringAndReleasing)
            return (false, true)
        }
        return (true, false)
    }

    /// Ends the measured part at `now` unless it has ended: a `total` run whose last calls were
    /// lost with their connection never counts `total` completions.
    func finish(at now: UInt64) {
        _ = stopAt.compareExchange(expected: 0, desired: max(now, warmupEnd), ordering: .acquiringAndReleasing)
    }

    var isOver: Bool { stopAt.load(ordering: .acquiring) != 0 }
}
