import ModerationPostgres
import RPCCore
import RPCPosix
internal import Synchronization

/// The store's availability as log lines: one warning when PostgreSQL stops answering, one notice
/// when it answers again, with how long the outage lasted.
///
/// Throttled as the other connection logs are: an outage that begins within `interval` of the
/// last warning is counted rather than logged (its end is not logged either), and the next
/// warning says how many began since the one before.
final class StoreHealthLog: Sendable {
    private let logger: Logger
    private let warnings: LogSummary
    /// Whether the current outage's start was logged, so that its end is.
    private let outageLogged = Atomic<Bool>(false)
    private let clock: @Sendable () -> UInt64

    init(
        logger: Logger, intervalNanoseconds: UInt64 = 10_000_000_000,
        clock: @escaping @Sendable () -> UInt64 = monotonicNow
    ) {
        self.logger = logger
        warnings = LogSummary(intervalNanoseconds: intervalNanoseconds)
        self.clock = clock
    }

    func record(_ change: StoreAvailabilityChange) {
        switch change {
        case .unavailable(let reason):
            guard let outages = warnings.record(now: clock()) else { return }
            outageLogged.store(true, ordering: .relaxed)
            var fields: [Logger.Field] = [("reason", reason)]
            if outages > 1 { fields.append(("outages", "\(outages) since the last warning")) }
            logger.warning("the store is unavailable: calls fail with ERR_STORE_UNAVAILABLE until it answers", fields)
        case .available(let outageSeconds):
            guard outageLogged.exchange(false, ordering: .relaxed) else { return }
            let rounded = (outageSeconds * 10).rounded() / 10
            logger.notice("the store is available again", [("outage", "\(rounded) s")])
        }
    }
}
