import Synchronization

/// Run-wide timing shared by the client threads.
final class SharedRun: Sendable {
    let warmupEnd: UInt64
    let measureEnd: UInt64
    let total: Int?
    private let measured = Atomic<Int>(0)
    private let warmup = Atomic<Int>(0)
    private let stopAt = Atomic<UInt64>(0)

    init(warmupEnd: UInt64, measureEnd: UInt64, total: Int?) {
        self.warmupEnd = warmupEnd
        self.measureEnd = measureEnd
        self.total = total
    }

    var measureStart: UInt64 { warmupEnd }
    var measureStop: UInt64 { stopAt.load(ordering: .acquiring) }
    var warmupCalls: UInt64 { UInt64(warmup.load(ordering: .relaxed)) }

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

    var isOver: Bool { stopAt.load(ordering: .acquiring) != 0 }
}
