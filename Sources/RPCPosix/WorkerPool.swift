internal import CSystemShims
internal import Glibc
import Synchronization

/// Threads for blocking work (storage), fed through one queue.
///
/// Event loops never block: a handler registered with `.workerPool` runs here, and its reply goes
/// back to the connection's loop through the call's port.
public final class WorkerPool: Sendable {
    private let queue: BlockingQueue<@Sendable () -> Void>
    private let threads: Mutex<[pthread_t]>

    /// Starts `count` worker threads.
    public init(count: Int, name: String = "worker") {
        queue = BlockingQueue()
        threads = Mutex([])
        let queue = self.queue
        var started: [pthread_t] = []
        for index in 0..<max(1, count) {
            started.append(startThread(name: "\(name)-\(index)") {
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
        for thread in threads { joinThread(thread) }
    }
}

/// A FIFO that blocks `pop` until an item arrives or the queue is closed.
final class BlockingQueue<Element: Sendable>: @unchecked Sendable {
    // Invariant: `items` and `closed` are only touched with `mutex` held.
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var items: [Element] = []
    private var head = 0
    private var closed = false

    init() {
        pthread_mutex_init(&mutex, nil)
        pthread_cond_init(&condition, nil)
    }

    deinit {
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&mutex)
    }

    func push(_ item: Element) {
        pthread_mutex_lock(&mutex)
        items.append(item)
        pthread_mutex_unlock(&mutex)
        pthread_cond_signal(&condition)
    }

    /// The next item, or nil once the queue is closed and empty.
    func pop() -> Element? {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        while head == items.count && !closed {
            pthread_cond_wait(&condition, &mutex)
        }
        guard head < items.count else { return nil }
        let item = items[head]
        head += 1
        if head > 1024 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        } else if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        }
        return item
    }

    func close() {
        pthread_mutex_lock(&mutex)
        closed = true
        pthread_mutex_unlock(&mutex)
        pthread_cond_broadcast(&condition)
    }
}
