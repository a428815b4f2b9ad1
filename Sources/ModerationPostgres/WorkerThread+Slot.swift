internal import Synchronization
internal import ThreadSupport

extension Mutex where Value == WorkerThread? {
    /// Waits for the thread kept here to end and lets it go: a later call finds none to wait for.
    func joinAndForget() {
        let worker = withLock { worker in
            defer { worker = nil }
            return worker
        }
        worker?.join()
    }
}
