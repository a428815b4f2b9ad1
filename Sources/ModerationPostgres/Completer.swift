internal import Moderation
internal import Synchronization
internal import ThreadSupport

/// The thread that reports committed batches, in the order the writers hand them over: the
/// commit handler first (through the `CommitFeed`, so it sees each app's actions in seq order
/// once, gaps filled from the log), then every write's `finish`. The writers go on with their
/// next batches meanwhile.
final class Completer: Sendable {
    /// What the store calls with each committed batch's actions (a struct, not a bare closure in
    /// the Mutex: see the SQLite store's `GroupCommitWriter.CommitHandler`).
    struct CommitHandler: Sendable {
        let call: @Sendable ([ActionRecord]) -> Void
    }

    private struct State: Sendable {
        var batches: [CompletedBatch] = []
        var closed = false
    }

    /// Held in a class so the thread can share it (a `Mutex` cannot be copied).
    final class HandlerBox: Sendable {
        let handler = Mutex<CommitHandler?>(nil)
    }

    let box = HandlerBox()
    private let state = ConditionLock(State())
    private let thread = Mutex<WorkerThread?>(nil)

    /// - Parameters:
    ///   - heads: each app's head seq at open (see `CommitFeed`).
    ///   - read: reads a page of an app's log, for the feed's gaps.
    init(
        heads: [String: UInt64], statistics: PostgresStatisticsRecorder,
        read: @escaping @Sendable (String, UInt64, UInt64) throws(ModerationError) -> [ActionRecord]
    ) {
        let state = state
        let box = box
        let worker = WorkerThread(name: "mod-pg-done") {
            var feed = CommitFeed(delivered: heads)
            while true {
                let batches = state.withLock(when: { !$0.batches.isEmpty || $0.closed }) {
                    state -> [CompletedBatch]? in
                    if state.batches.isEmpty { return nil }
                    defer { state.batches.removeAll(keepingCapacity: true) }
                    return state.batches
                }
                guard let batches else { break }
                for batch in batches {
                    if let call = box.handler.withLock({ $0 })?.call {
                        let (actions, filled) = feed.deliverable(batch.actions, read: read)
                        if filled > 0 { statistics.record { $0.actionsReadForGaps += UInt64(filled) } }
                        if !actions.isEmpty { call(actions) }
                    } else {
                        feed.skip(batch.actions)
                    }
                    batch.finish()
                }
            }
        }
        thread.withLock { $0 = worker }
    }

    func push(_ batch: CompletedBatch) {
        let accepted = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.batches.append(batch)
            return true
        }
        if accepted {
            state.signal()
        } else {
            batch.finish()
        }
    }

    /// Reports what is queued, then stops the thread (the writers must be stopped first).
    func close() {
        state.withLock { $0.closed = true }
        state.broadcast()
        let worker = thread.withLock { worker in
            defer { worker = nil }
            return worker
        }
        worker?.join()
    }
}
