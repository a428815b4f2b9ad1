import Moderation
import ThreadSupport

/// What the hub's dispatcher thread is given to do: committed batches from the writer, and
/// changes to its registry from the event loops and the replay threads.
///
/// Every caller only appends under a short lock (O(1) amortised), whatever the number of
/// subscriptions; the dispatcher takes everything queued at once and applies the commands, in
/// the order they were sent, before the batches taken with them.
final class DispatcherInbox: Sendable {
    /// A change to the registry, applied by the dispatcher.
    enum Command: Sendable {
        /// A new subscription, replaying: it is offered every action of its app from now on.
        case add(Subscription)
        /// The subscription's replay has sent the log through `head`: it goes live.
        case promote(Subscription, head: UInt64)
        /// The subscription has ended (or its stream has gone): the registry drops it.
        case remove(Subscription)
        /// The server shuts down: every subscription ends, telling its client where to resume.
        case endAll
        /// Signals the semaphore once everything sent before it has been applied.
        case barrier(BlockingSemaphore)
    }

    /// One turn of the dispatcher: commands first, then the batch (several queued batches joined).
    struct Work {
        var commands: [Command]
        var batch: [ActionRecord]
    }

    private struct State {
        var commands: [Command] = []
        var batches: [[ActionRecord]] = []
        var closed = false

        var isEmpty: Bool { commands.isEmpty && batches.isEmpty }
    }

    private let state = ConditionLock(State())

    /// Queues a committed batch (dropped once the inbox is closed).
    func push(_ batch: [ActionRecord]) {
        _ = enqueue { $0.batches.append(batch) }
    }

    /// Queues a command; false once the inbox is closed (the dispatcher has stopped or is stopping).
    @discardableResult
    func send(_ command: Command) -> Bool {
        enqueue { $0.commands.append(command) }
    }

    /// Everything queued, waiting for something when nothing is; nil once closed and drained.
    func next() -> Work? {
        state.withLock(when: { !$0.isEmpty || $0.closed }) { state in
            guard !state.isEmpty else { return nil }
            let batch = state.batches.count == 1 ? state.batches[0] : state.batches.flatMap { $0 }
            defer {
                state.commands = []
                state.batches = []
            }
            return Work(commands: state.commands, batch: batch)
        }
    }

    /// Adds to the inbox unless it is closed. Only the first addition to an empty inbox wakes
    /// the dispatcher: it waits only while the inbox is empty, and takes everything once awake,
    /// so a burst of thousands of commands costs one wake-up, not one each.
    private func enqueue(_ add: (inout State) -> Void) -> Bool {
        let (queued, wasEmpty) = state.withLock { state in
            guard !state.closed else { return (false, false) }
            let wasEmpty = state.isEmpty
            add(&state)
            return (true, wasEmpty)
        }
        if wasEmpty { state.signal() }
        return queued
    }

    /// Refuses new work; what is queued is still handed out.
    func close() {
        state.withLock { $0.closed = true }
        state.broadcast()
    }
}
