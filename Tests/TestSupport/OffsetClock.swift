internal import Glibc
internal import Synchronization

/// The real-time clock plus an offset a test moves forward: timestamps stay realistic (a server
/// over real sockets runs on real time) while retention and ban expiry can be reached at once.
public final class OffsetClock: Sendable {
    private let offset = Atomic<Int64>(0)

    public init() {}

    /// Unix milliseconds, moved forward by every `advance` so far.
    public func now() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000 + offset.load(ordering: .relaxed)
    }

    /// Moves the clock forward.
    public func advance(by milliseconds: Int64) {
        offset.wrappingAdd(milliseconds, ordering: .relaxed)
    }

    /// The clock as the service takes it.
    public var function: @Sendable () -> Int64 { { self.now() } }
}
