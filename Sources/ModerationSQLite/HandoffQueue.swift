internal import Moderation
internal import Synchronization
internal import ThreadSupport

/// A queue from many threads to one consumer thread, which takes everything queued at once.
///
/// Pushing appends under a short lock and wakes the consumer only when it sleeps. The writer's
/// inbox of writes and the completer's inbox of committed batches are both one of these.
final class HandoffQueue<Item: Sendable>: Sendable {
    private struct State {
        var items: [Item] = []
        var sleeping = false
        var closed = false
    }

    private let state = Mutex(State())
    private let wake = BlockingSemaphore()

    /// Queues `item`; false once the queue is closed.
    func push(_ item: Item) -> Bool {
        let (accepted, signal) = state.withLock { state -> (Bool, Bool) in
            guard !state.closed else { return (false, false) }
            state.items.append(item)
            defer { state.sleeping = false }
            return (true, state.sleeping)
        }
        if signal { wake.signal() }
        return accepted
    }

    /// Up to `max` queued items, waiting while there are none; nil once closed and drained.
    func take(max: Int) -> [Item]? {
        while true {
            let batch = state.withLock { state -> [Item]? in
                if !state.items.isEmpty {
                    if state.items.count <= max {
                        defer { state.items.removeAll(keepingCapacity: true) }
                        return state.items
                    }
                    defer { state.items.removeFirst(max) }
                    return Array(state.items.prefix(max))
                }
                if state.closed { return nil }
                state.sleeping = true
                return []
            }
            guard let batch else { return nil }
            if !batch.isEmpty { return batch }
            wake.wait()
        }
    }

    /// Refuses new items; the consumer drains what is queued, then `take` returns nil.
    func close() {
        let signal = state.withLock { state -> Bool in
            state.closed = true
            defer { state.sleeping = false }
            return state.sleeping
        }
        if signal { wake.signal() }
    }
}
