import Synchronization
import ThreadSupport

/// Threads for blocking work (storage), fed through one queue.
///
/// Event loops never block: a handler registered with `.workerPool` runs here, and its reply goes
/// back to the connection's loop through the call's port.
public final class WorkerPool: Sendable {
    private let queue: BlockingQueue<@Sendable () -> Void>
    private let threads: Mutex<[WorkerThread]>

    /// Starts `count` worker threads.
    public init(count: Int, name: String = "worker") {
        queue = BlockingQueue()
        threads = Mutex([])
        let queue = self.queue
        var started: [WorkerThread] = []
        for index in 0..<max(1, count) {
            started.append(
                WorkerThread(name: "\(name)-\(index)") {
                    while let task = queue.pop() { task() }
                })
        }
        threads.withLock { $0 = started }
    }

    /// Runs `task` on a worker thread.
    public func submit(_ task: @escaping @Sendable () -> Void) {
        queue.push(task)
    }

    /// Lets queued tasks finish, then stops the threads.
    public func shutdown() {
        queue.close()
        let threads = self.threads.withLock { threads in
            defer { threads = [] }
            return threads
        }
        for thread in threads { thread.join() }
    }
}

/// A FIFO that blocks `pop` until an item arrives or the queue is closed.
final class BlockingQueue<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        var head = 0
        var closed = false
    }

    private let state = ConditionLock(State())

    func push(_ item: Element) {
        state.withLock { $0.items.append(item) }
        state.signal()
    }

    /// The next item, or nil once the queue is closed and empty.
    func pop() -> Element? {
        state.withLock(when: { $0.head < $0.items.count || $0.closed }) { state in
            guard state.head < state.items.count else { return nil }
            let item = state.items[state.head]
            state.head += 1
            if state.head > 1024 && state.head * 2 > state.items.count {
                state.items.removeFirst(state.head)
                state.head = 0
            } else if state.head == state.items.count {
                state.items.removeAll(keepingCapacity: true)
                state.head = 0
            }
            return item
        }
    }

    func close() {
        state.withLock { $0.closed = true }
        state.broadcast()
    }
}
