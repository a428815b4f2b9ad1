public import Moderation
import Synchronization
import ThreadSupport

extension ModerationService {
    /// Runs the maintenance pass (expired bans, mutes and bans from the app, retention,
    /// idempotency window) and waits for it.
    /// - Throws: the pass's `ModerationError`.
    @discardableResult
    public func runMaintenanceAndWait() throws(ModerationError) -> MaintenanceReport {
        try Self.wait(runMaintenance)
    }

    /// Sweeps expired mutes and waits; returns how many were recorded.
    /// - Throws: the sweep's `ModerationError`.
    @discardableResult
    public func sweepExpiredMutesAndWait() throws(ModerationError) -> Int {
        try Self.wait(sweepExpiredMutes)
    }

    /// Sweeps expired bans from the app and waits; returns how many were recorded.
    /// - Throws: the sweep's `ModerationError`.
    @discardableResult
    public func sweepExpiredAppBansAndWait() throws(ModerationError) -> Int {
        try Self.wait(sweepExpiredAppBans)
    }

    /// Starts `start` and waits for the result it completes with.
    private static func wait<T: Sendable>(
        _ start: (@escaping @Sendable (Result<T, ModerationError>) -> Void) -> Void
    ) throws(ModerationError) -> T {
        let result = Mutex<Result<T, ModerationError>?>(nil)
        let done = BlockingSemaphore()
        start { outcome in
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        return try result.withLock { $0! }.get()
    }
}
