internal import ModerationStoreSupport
internal import Synchronization

/// What the store's writer has done, for the server's metrics: commits, their batch sizes, and
/// how long flushing the WAL took.
public struct StoreStatistics: Sendable, Equatable {
    /// Upper bounds of the batch-size histogram (writes per commit).
    public static let batchSizeBounds: [Int] = StoreHistogram.batchSizeBounds
    /// Upper bounds of the flush-latency histogram, in seconds.
    public static let syncSecondsBounds: [Double] = StoreHistogram.secondsBounds

    /// Transactions committed.
    public var commits: UInt64 = 0
    /// Writes committed in them.
    public var committedWrites: UInt64 = 0
    /// Commits per batch-size bucket (not cumulative; one more bucket for larger batches).
    public var batchSizes = [UInt64](repeating: 0, count: batchSizeBounds.count + 1)
    /// WAL flushes and their total time.
    public var syncs: UInt64 = 0
    public var syncSeconds = 0.0
    /// Flushes per latency bucket (not cumulative; one more bucket for slower ones).
    public var syncLatencies = [UInt64](repeating: 0, count: syncSecondsBounds.count + 1)
}

/// The counters behind `StoreStatistics`, updated once per batch and per flush.
final class StoreStatisticsRecorder: Sendable {
    private let statistics = Mutex(StoreStatistics())

    var snapshot: StoreStatistics { statistics.withLock { $0 } }

    func recordCommit(writes: Int) {
        let bucket = StoreHistogram.bucket(of: writes, bounds: StoreStatistics.batchSizeBounds)
        statistics.withLock { statistics in
            statistics.commits += 1
            statistics.committedWrites += UInt64(writes)
            statistics.batchSizes[bucket] += 1
        }
    }

    func recordSync(seconds: Double) {
        let bucket = StoreHistogram.bucket(of: seconds, bounds: StoreStatistics.syncSecondsBounds)
        statistics.withLock { statistics in
            statistics.syncs += 1
            statistics.syncSeconds += seconds
            statistics.syncLatencies[bucket] += 1
        }
    }
}
