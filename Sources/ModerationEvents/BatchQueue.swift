internal import Glibc
import Moderation

/// The hub's queue of committed batches: the writer pushes without waiting, the dispatcher pops.
final class BatchQueue: @unchecked Sendable {
    // Invariant: `batches`, `head` and `closed` are only touched with `mutex` held.
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var pending: [[ActionRecord]] = []
    private var closed = false

    init() {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&condition, nil)
    }

    deinit {
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&mutex)
    }

    func push(_ batch: [ActionRecord]) {
        pthread_mutex_lock(&mutex)
        if !closed { pending.append(batch) }
        pthread_mutex_unlock(&mutex)
        pthread_cond_signal(&condition)
    }

    /// The next batch (several queued batches are joined), or nil once closed and empty.
    func pop() -> [ActionRecord]? {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        while pending.isEmpty && !closed { pthread_cond_wait(&condition, &mutex) }
        guard !pending.isEmpty else { return nil }
        let joined = pending.count == 1 ? pending[0] : pending.flatMap { $0 }
        pending.removeAll(keepingCapacity: true)
        return joined
    }

    func close() {
        pthread_mutex_lock(&mutex)
        closed = true
        pthread_mutex_unlock(&mutex)
        pthread_cond_broadcast(&condition)
    }
}
