internal import Moderation
internal import ThreadSupport

/// One of the store's writers: a thread with its own connection and queue, committing queued
/// writes in batches (group commit) and handing each committed batch to the completer.
final class PostgresWriter: Sendable {
    let queue = WriteQueue()
    private let thread: WorkerThread

    init(
        index: Int, options: PostgresStoreOptions, gate: ConnectionGate, notifier: CommitNotifier,
        completer: Completer, appBanSets: AppBanSets, statistics: PostgresStatisticsRecorder
    ) {
        let queue = queue
        let loop = WriterLoop(
            options: options, gate: gate, notifier: notifier, queue: queue, completer: completer,
            appBanSets: appBanSets, statistics: statistics)
        thread = WorkerThread(name: "mod-pg-write-\(index)") {
            while let batch = queue.take(max: max(1, options.maxBatchSize)) {
                loop.run(batch)
            }
            loop.close()
        }
    }

    /// Finishes what is queued, then stops the thread.
    func close() {
        queue.close()
        thread.join()
    }
}

/// What a writer's thread runs for each batch.
final class WriterLoop: @unchecked Sendable {
    // Invariant: created before the writer thread starts and used only on it afterwards, so
    // `session` has one user.
    private let options: PostgresStoreOptions
    private let gate: ConnectionGate
    private let notifier: CommitNotifier
    private var session: PostgresSession?
    /// A connection was open before: opening one now is a reconnection (for the statistics).
    private var connectedBefore = false
    private let queue: WriteQueue
    private let completer: Completer
    private let appBanSets: AppBanSets
    private let statistics: PostgresStatisticsRecorder
    /// How often a write may meet a transient failure (deadlock, serialization) before it fails.
    private static let transientRetries = 3

    init(
        options: PostgresStoreOptions, gate: ConnectionGate, notifier: CommitNotifier, queue: WriteQueue,
        completer: Completer, appBanSets: AppBanSets, statistics: PostgresStatisticsRecorder
    ) {
        self.options = options
        self.gate = gate
        self.notifier = notifier
        self.queue = queue
        self.completer = completer
        self.appBanSets = appBanSets
        self.statistics = statistics
    }

    /// Runs one batch: every write in one transaction, one COMMIT, then the completions.
    ///
    /// Writes run without a savepoint each (a savepoint per write would give every write a
    /// subtransaction, and past 64 in one transaction PostgreSQL's snapshots slow down for
    /// everyone): a rule of the domain is that a mutation checks everything before it writes, so
    /// a failing one usually sent nothing and only the writer's memory needs putting back. When
    /// a failing write did send a change, or a statement failed (which aborts the transaction),
    /// the transaction is rolled back and the batch runs again without that write. A write
    /// refused because another writer holds its app is put off to the front of the next batch;
    /// a lost connection is opened again once (the transaction never committed, so the batch
    /// simply runs again), and if that fails every write fails with `ERR_STORE_UNAVAILABLE`.
    ///
    /// The batch grows once its first app's lock is held (`joinQueued`): what was queued while
    /// the writer waited for another instance to commit runs in this transaction, not after
    /// another wait of its own.
    func run(_ taken: [any StoreWrite]) {
        var batch = taken
        var failures = [ModerationError?](repeating: nil, count: batch.count)
        var deferred = [Bool](repeating: false, count: batch.count)
        var retries = [Int](repeating: 0, count: batch.count)
        var deferredApps = Set<String>()
        var applied: [Int] = []
        var actions: [ActionRecord] = []
        var reconnected = false
        var prefetching = true
        var joined = false

        /// Fails every write still open (the deferred ones excepted) with `error`.
        func failRemaining(_ error: ModerationError) {
            for index in batch.indices where failures[index] == nil && !deferred[index] { failures[index] = error }
            applied.removeAll()
        }

        /// After the connection was lost (nothing was committed): true to run the batch again on
        /// a new one, the first time; false once every open write has failed with `error`.
        func runAgainAfterLoss(_ error: ModerationError) -> Bool {
            self.session = nil
            if !reconnected {
                reconnected = true
                return true
            }
            failRemaining(error)
            return false
        }

        attempt: while true {
            applied.removeAll()
            let session: PostgresSession
            do {
                session = try connectedSession()
                try session.beginWrite()
            } catch {
                self.session = nil
                failRemaining(error)
                break attempt
            }
            if prefetching {
                if !joined {
                    joined = true
                    do {
                        let more = try joinQueued(batch, session: session)
                        batch += more
                        failures += [ModerationError?](repeating: nil, count: more.count)
                        deferred += [Bool](repeating: false, count: more.count)
                        retries += [Int](repeating: 0, count: more.count)
                    } catch {
                        session.abandonWrite()
                        if session.connection.failure?.isUnavailable == true || session.connection.isBroken {
                            if runAgainAfterLoss(error) { continue attempt }
                            break attempt
                        }
                        // The lock could not be read: the batch runs as taken, its writes lock
                        // their apps themselves.
                        continue attempt
                    }
                }
                let footprints = batch.indices.compactMap { index -> WriteFootprint? in
                    guard failures[index] == nil, !deferred[index], let footprint = batch[index].footprint,
                        !deferredApps.contains(footprint.app)
                    else { return nil }
                    return footprint
                }
                do {
                    if !footprints.isEmpty {
                        let started = monotonicSeconds()
                        let kept = try session.prefetch(footprints)
                        let seconds = monotonicSeconds() - started
                        statistics.record {
                            $0.prefetchedStandings += UInt64(kept)
                            $0.readAheadSeconds += seconds
                        }
                    }
                } catch {
                    // Only a read failed: the batch runs again without reading ahead, unless the
                    // connection is gone, which is handled as anywhere else.
                    session.abandonWrite()
                    statistics.record { $0.retries += 1 }
                    if session.connection.failure?.isUnavailable == true || session.connection.isBroken {
                        if runAgainAfterLoss(error) { continue attempt }
                        break attempt
                    }
                    prefetching = false
                    continue attempt
                }
            }
            for index in batch.indices where failures[index] == nil && !deferred[index] {
                if let app = batch[index].affinity, deferredApps.contains(app) {
                    deferred[index] = true
                    continue
                }
                let mark = session.mark(tag: index)
                do {
                    try batch[index].apply(session)
                    applied.append(index)
                } catch {
                    if session.isDeferred {
                        deferred[index] = true
                        if let app = batch[index].affinity { deferredApps.insert(app) }
                        if session.restoreIfUnchanged(mark) { continue }
                        session.abandonWrite()
                        statistics.record { $0.retries += 1 }
                        continue attempt
                    }
                    if let failure = session.connection.failure {
                        session.abandonWrite()
                        if failure.isUnavailable {
                            if runAgainAfterLoss(failure.error) { continue attempt }
                            break attempt
                        }
                        blame(failure, defaultIndex: index, failures: &failures, retries: &retries)
                        continue attempt
                    }
                    failures[index] = error
                    if !session.restoreIfUnchanged(mark) {
                        session.abandonWrite()
                        statistics.record { $0.retries += 1 }
                        continue attempt
                    }
                }
            }
            guard !applied.isEmpty else {
                session.abandonWrite()
                break attempt
            }
            let started = monotonicSeconds()
            do {
                actions = try session.commitWrite()
                statistics.recordCommit(writes: applied.count, seconds: monotonicSeconds() - started)
            } catch {
                let failure = session.connection.failure
                if let failure, !failure.isUnavailable, batch.indices.contains(failure.tag) {
                    // A change a write sent failed when the pipeline was read at COMMIT.
                    blame(failure, defaultIndex: failure.tag, failures: &failures, retries: &retries)
                    continue attempt
                }
                if failure?.isUnavailable == true {
                    self.session = nil
                    let unknown = ModerationError.storeUnavailable(
                        "the connection to PostgreSQL was lost while committing; the outcome is unknown")
                    for index in applied { failures[index] = unknown }
                } else {
                    for index in applied { failures[index] = error }
                }
                applied.removeAll()
            }
            break attempt
        }

        let putOff = batch.indices.filter { deferred[$0] }
        if !putOff.isEmpty {
            statistics.record { $0.deferredWrites += UInt64(putOff.count) }
            queue.pushFront(putOff.map { batch[$0] })
        }
        let done = batch.indices.filter { !deferred[$0] }
        guard !done.isEmpty else { return }
        completer.push(
            CompletedBatch(writes: done.map { batch[$0] }, failures: done.map { failures[$0] }, actions: actions))
    }

    /// Takes the lock of the batch's first declared app — waiting while another instance's
    /// transaction holds it, as the batch's first write would — then what was queued meanwhile,
    /// up to the batch size: writes that came while the lock was held elsewhere join this
    /// transaction. Nothing is taken when no write declared a footprint.
    private func joinQueued(_ batch: [any StoreWrite], session: PostgresSession) throws(ModerationError)
        -> [any StoreWrite]
    {
        guard let app = batch.lazy.compactMap({ $0.footprint?.app }).first else { return [] }
        let lockWait = monotonicSeconds()
        _ = try session.appID(named: app)
        statistics.record { $0.appLockWaitSeconds += monotonicSeconds() - lockWait }
        let more = queue.takeQueued(max: options.maxBatchSize - batch.count)
        if !more.isEmpty { statistics.record { $0.joinedWhileLocking += UInt64(more.count) } }
        return more
    }

    /// Records a failed statement against the write that sent it: a transient failure lets the
    /// write run again (a few times), any other fails it.
    private func blame(
        _ failure: PGFailure, defaultIndex: Int, failures: inout [ModerationError?], retries: inout [Int]
    ) {
        statistics.record { $0.retries += 1 }
        let culprit = failures.indices.contains(failure.tag) ? failure.tag : defaultIndex
        if failure.isTransient && retries[culprit] < Self.transientRetries {
            retries[culprit] += 1
        } else {
            failures[culprit] = failure.error
        }
    }

    /// The writer's session, connecting (again) when it has none or its connection broke.
    private func connectedSession() throws(ModerationError) -> PostgresSession {
        if let session, !session.connection.isBroken { return session }
        session = nil
        let connection = try gate.connect(options.connectionOptions, pipeline: true)
        if connectedBefore {
            statistics.record { $0.reconnects += 1 }
            // The new connection may reach another server, whose versions need not mean what the
            // kept ones did (as the readers' cache, `PostgresStore.init`).
            appBanSets.clear()
        }
        connectedBefore = true
        let fresh = PostgresSession(connection: connection, isWriter: true)
        fresh.notifier = notifier
        fresh.appBanSets = appBanSets
        session = fresh
        return fresh
    }

    /// The store is closing: the connection goes with the session.
    func close() {
        session = nil
    }
}
