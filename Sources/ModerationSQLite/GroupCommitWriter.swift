internal import Moderation
internal import Synchronization

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
        let handler = Mutex<(@Sendable ([ActionRecord]) -> Void)?>(nil)
        /// Bumped after every commit, before any of its writes is finished.
        let commits = Atomic<UInt64>(0)
    }

    let shared = Shared()
    private let queue = HandoffQueue<any StoreWrite>()
    private let completions = HandoffQueue<CompletedBatch>()
    private let thread: WorkerThread
    private let completer: WorkerThread

    /// - Parameter sync: flushes the WAL before batches are reported; nil when commits need not
    ///   survive a power loss (`Durability.normal`).
    init(session: SQLiteSession, maxBatchSize: Int, readers: ReaderPool, sync: WALSync?) {
        let queue = queue, completions = completions, shared = shared
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
                let durable = sync?.sync() ?? true
                let handler = shared.handler.withLock { $0 }
                for batch in batches {
                    durable ? batch.report(to: handler) : batch.reportLost()
                }
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

/// What the writer thread runs for each batch.
final class WriterLoop: @unchecked Sendable {
    // Invariant: created before the writer thread starts and used only on it afterwards, so
    // `session` has one user.
    let session: SQLiteSession
    private let shared: GroupCommitWriter.Shared
    private let readers: ReaderPool
    private let completions: HandoffQueue<CompletedBatch>

    init(session: SQLiteSession, shared: GroupCommitWriter.Shared, readers: ReaderPool, completions: HandoffQueue<CompletedBatch>) {
        self.session = session
        self.shared = shared
        self.readers = readers
        self.completions = completions
    }

    /// Runs one batch: every write in one transaction, one commit, then the completions.
    ///
    /// Writes run without a savepoint each: a rule of the domain is that a mutation checks
    /// everything before it writes, so a failing one usually changed nothing and only the
    /// writer's in-memory state needs putting back. When a failing write did change something
    /// (a storage error, or a write that broke the rule), the whole transaction is rolled back
    /// and the batch runs again without it — the same outcome a savepoint per write would give,
    /// without paying for one on every write.
    func run(_ batch: [any StoreWrite]) {
        var failures = [ModerationError?](repeating: nil, count: batch.count)
        var applied: [Int] = []
        attempt: while true {
            applied.removeAll(keepingCapacity: true)
            do {
                try session.beginWrite()
            } catch {
                for index in batch.indices where failures[index] == nil { failures[index] = error }
                break attempt
            }
            for index in batch.indices where failures[index] == nil {
                let mark = session.mark()
                do {
                    try batch[index].apply(session)
                    applied.append(index)
                } catch {
                    failures[index] = error
                    if !session.restoreIfUnchanged(mark) {
                        session.abandonWrite()
                        continue attempt
                    }
                }
            }
            do {
                try session.commitWrite()
            } catch {
                for index in applied { failures[index] = error }
                applied.removeAll()
            }
            break attempt
        }
        let actions = applied.isEmpty ? [] : session.takeBatchActions()
        let generation = shared.commits.wrappingAdd(1, ordering: .releasing).newValue
        readers.releaseSnapshots(before: generation)
        let completed = CompletedBatch(writes: batch, failures: failures, actions: actions)
        if !completions.push(completed) { completed.reportLost() }
    }
}

/// A batch whose outcome is final, on its way to the completer.
struct CompletedBatch: Sendable {
    let writes: [any StoreWrite]
    let failures: [ModerationError?]
    /// The actions the batch committed, in seq order.
    let actions: [ActionRecord]

    /// Calls the commit handler with the actions, then every write's `finish`.
    func report(to handler: (@Sendable ([ActionRecord]) -> Void)?) {
        if !actions.isEmpty, let handler { handler(actions) }
        for index in writes.indices { writes[index].finish(failures[index]) }
    }

    /// The WAL could not be flushed: nobody may be told their write is durable. Every write
    /// fails with `.internal` (it may or may not survive a crash).
    func reportLost() {
        let lost = ModerationError.storage("flushing the write-ahead log failed; the outcome is unknown")
        for index in writes.indices { writes[index].finish(failures[index] ?? lost) }
    }
}
