import ThreadSupport

/// The hub's own threads for starting subscriptions: authorizing and replaying block (store
/// reads, and waiting for a subscriber's connection to drain), so they run here rather than on
/// the RPC server's shared workers, where a few subscribers that do not read would hold up every
/// other call for as long as their replays wait.
final class ReplayThreads: Sendable {
    private struct State {
        var tasks: [@Sendable () -> Void] = []
        var head = 0
        var closed = false
        var threads: [WorkerThread] = []
    }

    private let state = ConditionLock(State())

    init(count: Int) {
        let threads = (0..<max(1, count)).map { index in
            WorkerThread(name: "mod-replay-\(index)") { [state] in
                while let task = Self.next(state) { task() }
            }
        }
        state.withLock { $0.threads = threads }
    }

    /// Runs `task` on one of the threads, in submission order.
    func submit(_ task: @escaping @Sendable () -> Void) {
        state.withLock { $0.tasks.append(task) }
        state.signal()
    }

    /// Lets the queued tasks run, then stops the threads.
    func shutdown() {
        let running = state.withLock { state in
            state.closed = true
            defer { state.threads = [] }
            return state.threads
        }
        state.broadcast()
        for thread in running { thread.join() }
    }

    private static func next(_ state: ConditionLock<State>) -> (@Sendable () -> Void)? {
        state.withLock(when: { $0.head < $0.tasks.count || $0.closed }) { state in
            guard state.head < state.tasks.count else { return nil }
            let task = state.tasks[state.head]
            state.head += 1
            if state.head == state.tasks.count {
                state.tasks.removeAll(keepingCapacity: true)
                state.head = 0
            }
            return task
        }
    }
}
