internal import Moderation
internal import ThreadSupport

/// The queue of one writer: any thread pushes, the writer takes everything queued at once.
/// Writes put off by a batch go back to the front, ahead of newer ones.
final class WriteQueue: Sendable {
    private struct State: Sendable {
        var items: [any StoreWrite] = []
        var closed = false
    }

    private let state = ConditionLock(State())

    /// Queues `write`; false once the queue is closed.
    func push(_ write: any StoreWrite) -> Bool {
        let accepted = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.items.append(write)
            return true
        }
        if accepted { state.signal() }
        return accepted
    }

    /// Puts `writes` back at the front, in their order (even once closed: they were accepted).
    func pushFront(_ writes: [any StoreWrite]) {
        guard !writes.isEmpty else { return }
        state.withLock { $0.items.insert(contentsOf: writes, at: 0) }
        state.signal()
    }

    /// Up to `max` queued writes, waiting while there are none; nil once closed and drained.
    func take(max: Int) -> [any StoreWrite]? {
        state.withLock(when: { !$0.items.isEmpty || $0.closed }) { state -> [any StoreWrite]? in
            if state.items.isEmpty { return nil }
            return Self.removeFront(max: max, of: &state)
        }
    }

    /// Up to `max` queued writes, without waiting: none when the queue is empty.
    func takeQueued(max: Int) -> [any StoreWrite] {
        guard max > 0 else { return [] }
        return state.withLock { state in Self.removeFront(max: max, of: &state) }
    }

    private static func removeFront(max: Int, of state: inout State) -> [any StoreWrite] {
        let count = min(max, state.items.count)
        defer { state.items.removeFirst(count) }
        return Array(state.items.prefix(count))
    }

    /// Refuses new writes; the writer drains what is queued, then `take` returns nil.
    func close() {
        state.withLock { $0.closed = true }
        state.broadcast()
    }
}
