import ThreadSupport

/// The threads `.onEveryStore` runs test cases on. A test case here blocks for most of its time
/// (sockets, PostgreSQL, fsync), and on Swift's cooperative pool, which has one thread a core, a
/// blocked test case holds up every other: on 2 cores two ran at a time. These threads run
/// `width` at once; the cooperative pool's threads stay free to start the next.
final class TestCaseThreads: TaskExecutor, @unchecked Sendable {
    /// As many test cases at once as a 2-core machine keeps busy while they wait, well within
    /// the test cluster's connections (each store holds a handful).
    static let shared = TestCaseThreads(width: 6)

    private let queue = ConditionLock<[UnownedJob]>([])

    private init(width: Int) {
        for index in 0..<width {
            WorkerThread.detached(name: "test-case-\(index)") { [self] in runJobs() }
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.withLock { $0.append(job) }
        queue.signal()
    }

    private func runJobs() {
        while true {
            let job = queue.withLock(when: { !$0.isEmpty }) { $0.removeFirst() }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
