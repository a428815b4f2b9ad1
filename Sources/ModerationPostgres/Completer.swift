internal import Moderation
internal import Synchronization
internal import ThreadSupport

/// The thread that reports committed batches, in the order the writers hand them over: the
/// commit handler first (through the `CommitFeed`, so it sees each app's actions in seq order
/// once, gaps filled from the log), then every write's `finish`. The writers go on with their
/// next batches meanwhile. Between batches it catches the feed up with the heads the
/// `CommitWatcher` reports (other instances' commits).
///
/// Only the apps the handler `follows` are read: another instance's actions of an app nobody
/// here follows are passed over (a server with no subscribers reads no log), and so are this
/// instance's own, which costs nothing but spares the handler's work.
///
/// Invariant: the feed lives on this thread alone (made and used inside its closure), so
/// batches and catch-ups reach the handler one at a time, in one order.
final class Completer: Sendable {
    private struct State: Sendable {
        var batches: [CompletedBatch] = []
        /// Apps' committed head seqs reported by the watcher, not yet looked at.
        var heads: [String: UInt64] = [:]
        /// The watcher polled: look again at apps whose catch-up failed.
        var retry = false
        var closed = false
    }

    /// What the store runs each round of reports inside (a struct, as `CommitHandler` is).
    struct Scope: Sendable {
        let run: CompletionScope
    }

    /// Held in a class so the thread can share it (a `Mutex` cannot be copied).
    final class HandlerBox: Sendable {
        let handler = Mutex<CommitHandler?>(nil)
        let completionScope = Mutex<Scope?>(nil)
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
                let work = state.withLock(when: { !$0.batches.isEmpty || !$0.heads.isEmpty || $0.retry || $0.closed }) {
                    state -> (batches: [CompletedBatch], heads: [String: UInt64], retry: Bool)? in
                    if state.batches.isEmpty && state.closed { return nil }
                    defer {
                        state.batches.removeAll(keepingCapacity: true)
                        state.heads.removeAll(keepingCapacity: true)
                        state.retry = false
                    }
                    return (state.batches, state.heads, state.retry)
                }
                guard let (batches, heads, retry) = work else { break }
                let round = {
                    for batch in batches {
                        if let handler = box.handler.withLock({ $0 }) {
                            let (actions, filled) = feed.deliverable(
                                batch.actions, follows: handler.follows, read: read)
                            if filled > 0 { statistics.record { $0.actionsReadForGaps += UInt64(filled) } }
                            if !actions.isEmpty { handler.deliver(actions) }
                        } else {
                            feed.skip(batch.actions)
                        }
                        batch.finish()
                    }
                }
                if let scope = box.completionScope.withLock({ $0 })?.run { scope(round) } else { round() }
                guard let handler = box.handler.withLock({ $0 }) else { continue }
                var caughtUp: [ActionRecord] = []
                for (app, head) in heads where head > (feed.delivered[app] ?? 0) {
                    if handler.follows(app) {
                        caughtUp += feed.catchUp(app: app, through: head, read: read)
                    } else {
                        feed.pass(app: app, through: head)
                    }
                }
                if retry { caughtUp += feed.retryBehind(follows: handler.follows, read: read) }
                if !caughtUp.isEmpty {
                    statistics.record { $0.actionsReadForGaps += UInt64(caughtUp.count) }
                    handler.deliver(caughtUp)
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

    /// Asks for the feed to catch up with `heads` (apps' committed head seqs, from another
    /// instance's notification or a poll); `retry` also retries apps whose last catch-up failed.
    func report(heads: [String: UInt64], retry: Bool) {
        guard !heads.isEmpty || retry else { return }
        state.withLock { state in
            for (app, head) in heads { state.heads[app] = max(state.heads[app] ?? 0, head) }
            state.retry = state.retry || retry
        }
        state.signal()
    }

    /// Reports what is queued, then stops the thread (the writers must be stopped first).
    func close() {
        state.withLock { $0.closed = true }
        state.broadcast()
        thread.joinAndForget()
    }
}
