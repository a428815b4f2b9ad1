internal import ModerationStoreSupport
internal import Synchronization

/// What the store's writers have done, for the server's metrics: commits, their batch sizes,
/// how long COMMIT took (its WAL flush included, as `synchronous_commit=on` waits for it), and
/// the events particular to a store shared by many instances.
public struct PostgresStoreStatistics: Sendable, Equatable {
    /// Upper bounds of the batch-size histogram (writes per commit).
    public static let batchSizeBounds: [Int] = StoreHistogram.batchSizeBounds
    /// Upper bounds of the commit-latency histogram, in seconds.
    public static let commitSecondsBounds: [Double] = StoreHistogram.secondsBounds

    /// Transactions committed.
    public var commits: UInt64 = 0
    /// Writes committed in them.
    public var committedWrites: UInt64 = 0
    /// Commits per batch-size bucket (not cumulative; one more bucket for larger batches).
    public var batchSizes = [UInt64](repeating: 0, count: batchSizeBounds.count + 1)
    /// COMMIT round trips and their total time.
    public var commitSeconds = 0.0
    /// Commits per latency bucket (not cumulative; one more bucket for slower ones).
    public var commitLatencies = [UInt64](repeating: 0, count: commitSecondsBounds.count + 1)
    /// Writes put off to the next batch because another writer held their app.
    public var deferredWrites: UInt64 = 0
    /// Batches rolled back and run again without a failed write (or after a transient failure).
    public var retries: UInt64 = 0
    /// Connections opened again after one was lost.
    public var reconnects: UInt64 = 0
    /// Actions committed by other writers (other instances) and read from the log for the
    /// commit handler: to fill a gap before a batch, or woken by a notification or a poll.
    public var actionsReadForGaps: UInt64 = 0
    /// Notifications of other instances' commits received (`LISTEN`), this instance's own included.
    public var notifications: UInt64 = 0
    /// Times the commit watcher's connection was opened again after it was lost.
    public var watcherReconnects: UInt64 = 0
    /// Apps' heads the commit watcher's polls read: every app's when its connection opens and at
    /// one poll in 40, the followed apps' at the others (`CommitWatcher`).
    public var headsPolled: UInt64 = 0
    /// Lookups of calls' reads answered from the read cache (`ReadCache`), and not.
    public var readCacheHits: UInt64 = 0
    public var readCacheMisses: UInt64 = 0
    /// Checks of an app's data version sent for the read cache, and reads that used a check
    /// another read had sent since they arrived.
    public var readCacheChecks: UInt64 = 0
    public var readCacheSharedChecks: UInt64 = 0
    /// Times the read cache was emptied because a reader connection broke.
    public var readCacheClears: UInt64 = 0
    /// Users' standings in groups read ahead for a batch's writes (`WriteFootprint`), in one
    /// statement per app and batch rather than a round trip each in the middle of a write.
    public var prefetchedStandings: UInt64 = 0
    /// Time writers spent taking their batches' first app lock, mostly waiting while another
    /// instance's transaction of the app held it.
    public var appLockWaitSeconds = 0.0
    /// Writes queued while a writer took its batch's first app lock, that joined that batch.
    public var joinedWhileLocking: UInt64 = 0
    /// Time writers spent reading their batches ahead (`PostgresSession.prefetch`), under the
    /// apps' locks: with the lock's wait and the COMMIT, most of what an app's turn costs.
    public var readAheadSeconds = 0.0
}

/// The counters behind `PostgresStoreStatistics`.
final class PostgresStatisticsRecorder: Sendable {
    private let statistics = Mutex(PostgresStoreStatistics())

    var snapshot: PostgresStoreStatistics { statistics.withLock { $0 } }

    func recordCommit(writes: Int, seconds: Double) {
        let size = StoreHistogram.bucket(of: writes, bounds: PostgresStoreStatistics.batchSizeBounds)
        let latency = StoreHistogram.bucket(of: seconds, bounds: PostgresStoreStatistics.commitSecondsBounds)
        statistics.withLock { statistics in
            statistics.commits += 1
            statistics.committedWrites += UInt64(writes)
            statistics.batchSizes[size] += 1
            statistics.commitSeconds += seconds
            statistics.commitLatencies[latency] += 1
        }
    }

    func record(_ change: (inout PostgresStoreStatistics) -> Void) {
        statistics.withLock { change(&$0) }
    }
}
