internal import Synchronization

/// A clock tests move by hand, in Unix milliseconds; every reading is one millisecond after the
/// previous one unless frozen, so that ordering by time is deterministic.
public final class ManualWallClock: Sendable {
    private let current: Atomic<Int64>
    private let ticking: Bool

    public init(start: Int64 = 1_700_000_000_000, ticking: Bool = true) {
        current = Atomic(start)
        self.ticking = ticking
    }

    /// The time now (and, when ticking, one millisecond later next time).
    public func now() -> Int64 {
        ticking ? current.wrappingAdd(1, ordering: .relaxed).oldValue : current.load(ordering: .relaxed)
    }

    /// Moves the clock forward.
    public func advance(by milliseconds: Int64) {
        current.wrappingAdd(milliseconds, ordering: .relaxed)
    }

    /// The time the next reading will return.
    public var peek: Int64 { current.load(ordering: .relaxed) }

    /// The clock as the service takes it.
    public var function: @Sendable () -> Int64 { { self.now() } }
}
