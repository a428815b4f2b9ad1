internal import Glibc
import ThreadSupport

/// The hub's own threads for starting subscriptions: authorizing and replaying block (store
/// reads, and waiting for a subscriber's connection to drain), so they run here rather than on
/// the RPC server's shared workers, where a few subscribers that do not read would hold up every
/// other call for as long as their replays wait.
final class ReplayThreads: @unchecked Sendable {
    // Invariant: `tasks`, `head`, `closed` and (after `init`) `threads` are only touched with
    // `mutex` held.
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var tasks: [@Sendable () -> Void] = []
    private var head = 0
    private var closed = false
    private var threads: [WorkerThread] = []

    init(count: Int) {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&condition, nil)
        threads = (0..<max(1, count)).map { index in
            WorkerThread(name: "mod-replay-\(index)") { [self] in
                while let task = next() { task() }
            }
        }
    }

    deinit {
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&mutex)
    }

    /// Runs `task` on one of the threads, in submission order.
    func submit(_ task: @escaping @Sendable () -> Void) {
        pthread_mutex_lock(&mutex)
        tasks.append(task)
        pthread_mutex_unlock(&mutex)
        pthread_cond_signal(&condition)
    }

    /// Lets the queued tasks run, then stops the threads.
    func shutdown() {
        pthread_mutex_lock(&mutex)
        closed = true
        let running = threads
        threads = []
        pthread_mutex_unlock(&mutex)
        pthread_cond_broadcast(&condition)
        for thread in running { thread.join() }
    }

    private func next() -> (@Sendable () -> Void)? {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        while head == tasks.count && !closed { pthread_cond_wait(&condition, &mutex) }
        guard head < tasks.count else { return nil }
        let task = tasks[head]
        head += 1
        if head == tasks.count {
            tasks.removeAll(keepingCapacity: true)
            head = 0
        }
        return task
    }
}
