internal import Synchronization
internal import ThreadSupport

/// A thread that runs the service's maintenance every interval until stopped.
final class MaintenanceLoop: Sendable {
    private final class Control: Sendable {
        let wake = BlockingSemaphore()
        let stopped = Atomic<Bool>(false)
    }

    private let control = Control()
    private let thread: WorkerThread

    init(intervalMs: Int64, _ step: @escaping @Sendable () -> Void) {
        let control = control
        thread = WorkerThread(name: "mod-maintenance") {
            while !control.stopped.load(ordering: .acquiring) {
                if control.wake.wait(milliseconds: intervalMs) { continue }
                if control.stopped.load(ordering: .acquiring) { break }
                step()
            }
        }
    }

    func stop() {
        control.stopped.store(true, ordering: .releasing)
        control.wake.signal()
        thread.join()
    }
}
