import Synchronization
import ThreadSupport

extension ModerationService {
    /// What one maintenance run did.
    public struct MaintenanceReport: Sendable, Equatable {
        /// Expired bans recorded as `unbanned` (reason "expired").
        public var expiredBans: Int
        /// Actions removed from the log by retention.
        public var prunedActions: Int
        /// Idempotency replies forgotten after their window.
        public var purgedReplies: Int
    }

    /// Records every ban past its expiry as an `unbanned` action (reason "expired", by "@app")
    /// and deletes it, in steps of `maintenanceBatchSize` bans; completes with how many.
    public func sweepExpiredBans(completion: @escaping @Sendable (Result<Int, ModerationError>) -> Void) {
        sweepStep(total: 0, completion: completion)
    }

    /// Sweeps expired bans, then prunes actions older than the retention and idempotency
    /// replies older than their window, each in bounded steps.
    public func runMaintenance(completion: @escaping @Sendable (Result<MaintenanceReport, ModerationError>) -> Void) {
        sweepExpiredBans { swept in
            switch swept {
            case .failure(let error):
                completion(.failure(error))
            case .success(let expired):
                self.pruneStep(
                    report: MaintenanceReport(expiredBans: expired, prunedActions: 0, purgedReplies: 0),
                    completion: completion)
            }
        }
    }

    /// `runMaintenance`, waiting for it (the maintenance loop's step).
    func runMaintenanceAndWait() {
        let done = BlockingSemaphore()
        runMaintenance { _ in done.signal() }
        done.wait()
    }

    private func sweepStep(total: Int, completion: @escaping @Sendable (Result<Int, ModerationError>) -> Void) {
        let batch = configuration.maintenanceBatchSize
        maintenanceWrite({ (context: inout WriteContext) throws(ModerationError) -> Int in
            let expired = try context.tx.expiredBans(at: context.now, limit: batch)
            for entry in expired {
                var appContext = WriteContext(tx: context.tx, caller: ValidatedCaller(app: entry.app), now: context.now)
                var access = try appContext.access(entry.guid)
                guard let ban = try context.tx.ban(groupID: access.groupID, uid: entry.uid),
                    !ban.isActive(at: context.now)
                else {
                    continue
                }
                try appContext.expire(ban, in: &access)
                try appContext.saveCounters(&access)
            }
            return expired.count
        }) { result in
            switch result {
            case .failure(let error): completion(.failure(error))
            case .success(let count) where count >= batch:
                self.expiredBansSwept.add(UInt64(count), ordering: .relaxed)
                self.sweepStep(total: total + count, completion: completion)
            case .success(let count):
                self.expiredBansSwept.add(UInt64(count), ordering: .relaxed)
                completion(.success(total + count))
            }
        }
    }

    private func pruneStep(
        report: MaintenanceReport, completion: @escaping @Sendable (Result<MaintenanceReport, ModerationError>) -> Void
    ) {
        let batch = configuration.maintenanceBatchSize
        let retention = configuration.actionRetentionMs
        let window = configuration.idempotencyWindowMs
        maintenanceWrite({ (context: inout WriteContext) throws(ModerationError) -> (Int, Int) in
            let actions = try context.tx.pruneActions(before: context.now - retention, limit: batch)
            let replies = try context.tx.purgeIdempotentReplies(before: context.now - window, limit: batch)
            return (actions, replies)
        }) { result in
            switch result {
            case .failure(let error):
                completion(.failure(error))
            case .success(let (actions, replies)):
                var report = report
                report.prunedActions += actions
                report.purgedReplies += replies
                if actions >= batch || replies >= batch {
                    self.pruneStep(report: report, completion: completion)
                } else {
                    completion(.success(report))
                }
            }
        }
    }

    private func maintenanceWrite<Value: Sendable>(
        _ body: @escaping WriteBody<Value>, completion: @escaping @Sendable (Result<Value, ModerationError>) -> Void
    ) {
        store.submit(
            PendingMutation(
                caller: ValidatedCaller(app: ""), clock: clock, idempotencyWindowMs: configuration.idempotencyWindowMs,
                replay: nil,
                completion: { outcome in
                    if case .done(let result) = outcome { completion(result) }
                },
                body: body))
    }
}
