internal import Moderation
internal import Synchronization
internal import ThreadSupport

/// The wrong-password limit's ledger in PostgreSQL (`password_attempts`), so that every instance
/// on the database counts the same wrong passwords: N instances together allow the limit once.
///
/// Each operation is one statement in autocommit on a reader connection: a count (on the calling
/// thread, a worker: `JoinGroup` runs there), or an UPSERT that trims the window and appends,
/// atomic against every instance's through the row's lock. Records run on a thread of their own,
/// in order, because they are asked for from the store's completer thread, which must not wait
/// for the database; the join's reply is sent from there once the record is stored. Every
/// `purgeEvery` records, keys whose window has passed are deleted.
final class PostgresPasswordAttempts: PasswordAttemptLedger {
    private struct Record: Sendable {
        let statement: Statement
        let parameters: [PGValue]
        let cutoff: Int64?
        let done: @Sendable () -> Void
    }

    private struct State: Sendable {
        var records: [Record] = []
        var closed = false
    }

    private let readers: ReaderPool
    private let state = ConditionLock(State())
    private let purgeEvery: Int
    private let thread: Mutex<WorkerThread?>

    init(readers: ReaderPool, purgeEvery: Int = 1000) {
        self.readers = readers
        self.purgeEvery = purgeEvery
        thread = Mutex(nil)
        let worker = WorkerThread(name: "pg-password-attempts") { [self] in run() }
        thread.withLock { $0 = worker }
    }

    func failures(_ key: PasswordAttemptKey, after cutoff: Int64) throws(ModerationError) -> PasswordFailures {
        try PostgresStore.autocommit(readers) { (connection) throws(ModerationError) -> PasswordFailures in
            try Self.failures(key, after: cutoff, on: connection)
        }
    }

    /// The key's wrong passwords after `cutoff`, read on `connection` (in whatever transaction it
    /// has open).
    static func failures(_ key: PasswordAttemptKey, after cutoff: Int64, on connection: PGConnection)
        throws(ModerationError) -> PasswordFailures
    {
        let rows = try connection.query(
            .passwordFailures, [.text(key.app), .text(key.guid), .text(key.uid), .int(cutoff)])
        return PasswordFailures(count: rows.int(0, 0), first: rows.isNull(0, 1) ? nil : rows.int64(0, 1))
    }

    func recordFailure(
        _ key: PasswordAttemptKey, at time: Int64, cutoff: Int64, then done: @escaping @Sendable () -> Void
    ) {
        enqueue(
            Record(
                statement: .recordPasswordFailure,
                parameters: [.text(key.app), .text(key.guid), .text(key.uid), .int(time), .int(cutoff)],
                cutoff: cutoff, done: done))
    }

    func clear(_ key: PasswordAttemptKey, then done: @escaping @Sendable () -> Void) {
        enqueue(
            Record(
                statement: .clearPasswordFailures, parameters: [.text(key.app), .text(key.guid), .text(key.uid)],
                cutoff: nil, done: done))
    }

    /// Runs the records queued so far, then stops the thread; later ones only call `done`.
    func close() {
        state.withLock { $0.closed = true }
        state.broadcast()
        thread.joinAndForget()
    }

    private func enqueue(_ record: Record) {
        let accepted = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.records.append(record)
            return true
        }
        if accepted { state.signal() } else { record.done() }
    }

    private func run() {
        var sincePurge = 0
        while let records = state.withLock(
            when: { !$0.records.isEmpty || $0.closed },
            { state -> [Record]? in
                defer { state.records.removeAll() }
                return state.records.isEmpty ? nil : state.records
            })
        {
            for record in records {
                // A failure (PostgreSQL unreachable) leaves the attempt uncounted: the reply
                // still goes out, and the next check fails with the same error instead.
                _ = try? PostgresStore.autocommit(readers) { (connection) throws(ModerationError) in
                    try connection.query(record.statement, record.parameters)
                }
                record.done()
                guard let cutoff = record.cutoff else { continue }
                sincePurge += 1
                if sincePurge >= purgeEvery {
                    sincePurge = 0
                    _ = try? PostgresStore.autocommit(readers) { (connection) throws(ModerationError) in
                        try connection.query(.purgePasswordFailures, [.int(cutoff)])
                    }
                }
            }
        }
    }
}
