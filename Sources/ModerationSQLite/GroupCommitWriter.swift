internal import Moderation
internal import Synchronization

/// The store's one writer: a thread that owns the write connection and commits queued writes in
/// batches (group commit).
///
/// Each round takes everything queued (up to `maxBatchSize`), runs every write in its own
/// savepoint inside one transaction — a write that throws is rolled back alone — commits once
/// (one fsync with `synchronous=FULL`), then hands the batch's actions to the commit handler and
/// finally calls every write's `finish`. No write is reported done before its commit is durable.
final class GroupCommitWriter: Sendable {
    /// State the submitting threads and the writer thread share.
    final class Shared: Sendable {
        let handler = Mutex<(@Sendable ([ActionRecord]) -> Void)?>(nil)
        /// Bumped after every commit, before any of its writes is finished.
        let commits = Atomic<UInt64>(0)
    }

    let shared = Shared()
    private let queue = WriterQueue()
    private let thread: WorkerThread

    init(session: SQLiteSession, maxBatchSize: Int) {
        let queue = queue
        let loop = WriterLoop(session: session, shared: shared)
        thread = WorkerThread(name: "mod-sqlite-write") {
            while let batch = queue.take(max: max(1, maxBatchSize)) {
                loop.run(batch)
            }
            loop.session.abandonWrite()
        }
    }

    func submit(_ write: any StoreWrite) {
        if !queue.push(write) { write.finish(.storage("the store is closed")) }
    }

    /// Finishes what is queued, then stops the thread.
    func close() {
        queue.close()
        thread.join()
    }
}

/// What the writer thread runs for each batch.
final class WriterLoop: @unchecked Sendable {
    // Invariant: created before the writer thread starts and used only on it afterwards, so
    // `session` has one user.
    let session: SQLiteSession
    private let shared: GroupCommitWriter.Shared

    init(session: SQLiteSession, shared: GroupCommitWriter.Shared) {
        self.session = session
        self.shared = shared
    }

    func run(_ batch: [any StoreWrite]) {
        var failures = [ModerationError?](repeating: nil, count: batch.count)
        var applied: [Int] = []
        for index in batch.indices {
            if !session.connection.inTransaction {
                do {
                    try session.beginWrite()
                } catch {
                    for rest in index..<batch.count { failures[rest] = error }
                    break
                }
            }
            do {
                try session.savepoint { () throws(ModerationError) in try batch[index].apply(session) }
                applied.append(index)
            } catch {
                failures[index] = error
                if !session.connection.inTransaction {
                    // SQLite rolled the whole transaction back (disk full, I/O error): the writes
                    // applied before this one are gone too.
                    let lost = ModerationError.storage("the batch transaction was rolled back: \(error.message)")
                    for earlier in applied { failures[earlier] = lost }
                    applied.removeAll()
                    session.abandonWrite()
                }
            }
        }
        if session.connection.inTransaction {
            do {
                try session.commitWrite()
            } catch {
                for index in applied { failures[index] = error }
                applied.removeAll()
            }
        }
        let actions = applied.isEmpty ? [] : session.takeBatchActions()
        shared.commits.wrappingAdd(1, ordering: .releasing)
        if !actions.isEmpty, let handler = shared.handler.withLock({ $0 }) {
            handler(actions)
        }
        for index in batch.indices {
            batch[index].finish(failures[index])
        }
    }
}
