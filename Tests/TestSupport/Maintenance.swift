public import Moderation
import Synchronization
import ThreadSupport

extension ModerationService {
    /// Runs the maintenance pass (expired bans, retention, idempotency window) and waits for it.
    /// - Throws: the pass's `ModerationError`.
    @discardableResult
    public func runMaintenanceAndWait() throws(ModerationError) -> MaintenanceReport {
        let result = Mutex<Result<MaintenanceReport, ModerationError>?>(nil)
        let done = BlockingSemaphore()
        runMaintenance { outcome in
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        return try result.withLock { $0! }.get()
    }
}
