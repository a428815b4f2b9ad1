import Moderation
import ThreadSupport

/// The hub's queue of committed batches: the writer pushes without waiting, the dispatcher pops.
final class BatchQueue: Sendable {
    private struct State {
        var pending: [[ActionRecord]] = []
        var closed = false
    }

    private let state = ConditionLock(State())

    func push(_ batch: [ActionRecord]) {
        state.withLock { state in
            if !state.closed { state.pending.append(batch) }
        }
        state.signal()
    }

    /// The next batch (several queued batches are joined), or nil once closed and empty.
    func pop() -> [ActionRecord]? {
        state.withLock(when: { !$0.pending.isEmpty || $0.closed }) { state in
            guard !state.pending.isEmpty else { return nil }
            let joined = state.pending.count == 1 ? state.pending[0] : state.pending.flatMap { $0 }
            state.pending.removeAll(keepingCapacity: true)
            return joined
        }
    }

    func close() {
        state.withLock { $0.closed = true }
        state.broadcast()
    }
}
