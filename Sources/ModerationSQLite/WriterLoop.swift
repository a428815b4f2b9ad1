internal import Moderation
internal import Synchronization

/// What the writer thread runs for each batch.
final class WriterLoop: @unchecked Sendable {
    // Invariant: created before the writer thread starts and used only on it afterwards, so
    // `session` has one user.
    let session: SQLiteSession
    private let shared: GroupCommitWriter.Shared
    private let readers: ReaderPool
    private let completions: HandoffQueue<CompletedBatch>

    init(
        session: SQLiteSession, shared: GroupCommitWriter.Shared, readers: ReaderPool,
        completions: HandoffQueue<CompletedBatch>
    ) {
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
    /// without paying for one on every write. Whether it changed something is SQLite's count of
    /// changed rows (`SQLiteSession.restoreIfUnchanged`), not what its store methods report.
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
        if !applied.isEmpty { shared.statistics.recordCommit(writes: applied.count) }
        let generation = shared.commits.wrappingAdd(1, ordering: .releasing).newValue
        readers.releaseSnapshots(before: generation)
        let completed = CompletedBatch(writes: batch, failures: failures, actions: actions)
        if !completions.push(completed) { completed.reportLost() }
    }
}
