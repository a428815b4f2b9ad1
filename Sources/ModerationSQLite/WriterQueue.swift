internal import Moderation
internal import Synchronization

/// The queue between the threads that submit writes and the store's single writer.
///
/// Submitting appends under a short lock and wakes the writer only when it is asleep; the writer
/// takes everything queued (up to a batch) at once.
final class WriterQueue: Sendable {
    private struct State {
        var items: [any StoreWrite] = []
        var sleeping = false
        var closed = false
    }

    private let state = Mutex(State())
    private let wake = BlockingSemaphore()

    /// Queues `write`; false once the queue is closed.
    func push(_ write: any StoreWrite) -> Bool {
        let (accepted, signal) = state.withLock { state -> (Bool, Bool) in
            guard !state.closed else { return (false, false) }
            state.items.append(write)
            defer { state.sleeping = false }
            return (true, state.sleeping)
        }
        if signal { wake.signal() }
        return accepted
    }

    /// Up to `max` queued writes, waiting while there are none; nil once closed and drained.
    func take(max: Int) -> [any StoreWrite]? {
        while true {
            let batch = state.withLock { state -> [any StoreWrite]? in
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

    /// Refuses new writes; the writer drains what is queued, then `take` returns nil.
    func close() {
        let signal = state.withLock { state -> Bool in
            state.closed = true
            defer { state.sleeping = false }
            return state.sleeping
        }
        if signal { wake.signal() }
    }
}
