internal import Glibc
internal import Moderation
internal import Synchronization
internal import ThreadSupport

/// The store's one writer: a thread that owns the write connection and commits queued writes in
/// batches (group commit), and a completer thread that reports them.
///
/// Each round takes everything queued (up to `maxBatchSize`), runs every write inside one
/// transaction — a write that throws is rolled back alone (see `WriterLoop.run`) — and commits
/// once. The committed batch then goes to the completer, which flushes the WAL (`WALSync`, once
/// for all the batches it has), then calls the commit handler with each batch's actions and
/// every write's `finish`, in batch order — while the writer already runs the next batch. No
/// write is reported done before its commit is durable.
final class GroupCommitWriter: Sendable {
    /// State the submitting threads and the writer thread share.
    final class Shared: Sendable {
        /// The commit handler (a struct: see `CommitHandler`). The SQLite store gives it every
        /// action: they are in memory, so leaving out unfollowed apps would spare nothing.
        let handler = Mutex<CommitHandler?>(nil)
        /// What each round of reports runs inside (a struct for the reason `CommitHandler` is).
        let completionScope = Mutex<Scope?>(nil)
        /// Bumped after every commit, before any of its writes is finished.
        let commits = Atomic<UInt64>(0)
        /// Commits, batch sizes and WAL flush times, for metrics.
        let statistics = StoreStatisticsRecorder()
    }

    /// What the store runs each round of reports inside.
    struct Scope: Sendable {
        let run: CompletionScope
    }

    let shared = Shared()
    private let queue = HandoffQueue<any StoreWrite>()
    private let completions = HandoffQueue<CompletedBatch>()
    private let thread: WorkerThread
    private let completer: WorkerThread

    /// - Parameter sync: flushes the WAL before batches are reported; nil when commits need not
    ///   survive a power loss (`Durability.normal`).
    init(session: SQLiteSession, maxBatchSize: Int, readers: ReaderPool, sync: WALSync?) {
        let queue = queue
        let completions = completions
        let shared = shared
        let loop = WriterLoop(session: session, shared: shared, readers: readers, completions: completions)
        thread = WorkerThread(name: "mod-sqlite-write") {
            while let batch = queue.take(max: max(1, maxBatchSize)) {
                loop.run(batch)
            }
            loop.session.abandonWrite()
        }
        completer = WorkerThread(name: "mod-sqlite-done") {
            while let batches = completions.take(max: 64) {
                // One flush makes every batch taken durable (group commit, once more).
                var durable = true
                if let sync {
                    let started = monotonicSeconds()
                    durable = sync.sync()
                    shared.statistics.recordSync(seconds: monotonicSeconds() - started)
                }
                let handler = shared.handler.withLock { $0 }?.deliver
                let round = {
                    for batch in batches {
                        durable ? batch.report(to: handler) : batch.reportLost()
                    }
                }
                if let scope = shared.completionScope.withLock({ $0 })?.run { scope(round) } else { round() }
            }
        }
    }

    func submit(_ write: any StoreWrite) {
        if !queue.push(write) { write.finish(.storage("the store is closed")) }
    }

    /// Finishes what is queued, then stops both threads.
    func close() {
        queue.close()
        thread.join()
        completions.close()
        completer.join()
    }
}

/// The monotonic clock in seconds, for timing flushes.
private func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
