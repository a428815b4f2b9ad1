import Synchronization
import ThreadSupport

extension ModerationService {
    /// What one maintenance run did.
    public struct MaintenanceReport: Sendable, Equatable {
        /// Expired bans recorded as `unbanned` (reason "expired").
        public var expiredBans: Int
        /// Expired mutes recorded as `unmuted` (reason "expired").
        public var expiredMutes: Int
        /// Actions removed from the log by retention.
        public var prunedActions: Int
        /// Idempotency replies forgotten after their window.
        public var purgedReplies: Int
        /// Rows of invites past their expiry removed (an expired invite is already "not found";
        /// its expiry records no action: the `invited` action carried it).
        public var purgedInvites: Int = 0
        /// Expired bans from the app recorded as `appUnbanned` (reason "expired").
        public var expiredAppBans: Int = 0
    }

    /// Records every ban past its expiry as an `unbanned` action (reason "expired", by "@app")
    /// and deletes it, in steps of `maintenanceBatchSize` bans; completes with how many.
    public func sweepExpiredBans(completion: @escaping @Sendable (Result<Int, ModerationError>) -> Void) {
        sweepStep(.bans, total: 0, completion: completion)
    }

    /// Records every mute past its expiry as an `unmuted` action (reason "expired", by "@app")
    /// and lifts it, in steps of `maintenanceBatchSize` mutes; completes with how many.
    public func sweepExpiredMutes(completion: @escaping @Sendable (Result<Int, ModerationError>) -> Void) {
        sweepStep(.mutes, total: 0, completion: completion)
    }

    /// Records every ban from the app past its expiry as an `appUnbanned` action (reason
    /// "expired", by "@app") and deletes it, in steps of `maintenanceBatchSize` bans; completes
    /// with how many.
    public func sweepExpiredAppBans(completion: @escaping @Sendable (Result<Int, ModerationError>) -> Void) {
        sweepStep(.appBans, total: 0, completion: completion)
    }

    /// Sweeps expired bans, mutes and bans from the app, then prunes actions older than the
    /// retention, idempotency replies older than their window and invites past their expiry,
    /// each in bounded steps.
    public func runMaintenance(completion: @escaping @Sendable (Result<MaintenanceReport, ModerationError>) -> Void) {
        runMaintenance(pruning: true, completion: completion)
    }

    /// The sweeps, then the pruning when `pruning`.
    private func runMaintenance(
        pruning: Bool, completion: @escaping @Sendable (Result<MaintenanceReport, ModerationError>) -> Void
    ) {
        sweepExpiredBans { bans in
            switch bans {
            case .failure(let error):
                completion(.failure(error))
            case .success(let expiredBans):
                self.sweepExpiredMutes { mutes in
                    switch mutes {
                    case .failure(let error):
                        completion(.failure(error))
                    case .success(let expiredMutes):
                        self.sweepExpiredAppBans { appBans in
                            switch appBans {
                            case .failure(let error):
                                completion(.failure(error))
                            case .success(let expiredAppBans):
                                let report = MaintenanceReport(
                                    expiredBans: expiredBans, expiredMutes: expiredMutes, prunedActions: 0,
                                    purgedReplies: 0, expiredAppBans: expiredAppBans)
                                if pruning {
                                    self.pruneStep(report: report, completion: completion)
                                } else {
                                    completion(.success(report))
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// The maintenance loop's step, waiting for it: the sweeps every time, the pruning when
    /// `pruneIntervalMs` has passed since the loop last pruned (and at its first step).
    func runScheduledMaintenanceAndWait() {
        let now = clock()
        let pruning = lastScheduledPrune.withLock { last -> Bool in
            if let last, now >= last, now - last < configuration.pruneIntervalMs { return false }
            last = now
            return true
        }
        let done = BlockingSemaphore()
        runMaintenance(pruning: pruning) { _ in done.signal() }
        done.wait()
    }

    /// What a sweep looks for.
    private enum Sweep {
        case bans
        case mutes
        case appBans
    }

    /// One step of a sweep: up to a batch of expiries, each rechecked under the group's (or, for
    /// a ban from the app, the app's) lock (a store several servers share returns only apps this
    /// transaction holds, so another instance's sweep cannot record the same expiry), then the
    /// next step if the batch was full or the step's time (`maintenanceStepMs`) ran out before
    /// its end.
    private func sweepStep(
        _ sweep: Sweep, total: Int, completion: @escaping @Sendable (Result<Int, ModerationError>) -> Void
    ) {
        let batch = configuration.maintenanceBatchSize
        let stepTime = Duration.milliseconds(configuration.maintenanceStepMs)
        maintenanceWrite({ (context: inout WriteContext) throws(ModerationError) -> (swept: Int, more: Bool) in
            let started = ContinuousClock.now
            let now = context.now
            let expired =
                switch sweep {
                case .bans: try context.tx.expiredBans(at: now, limit: batch)
                case .mutes: try context.tx.expiredMutes(at: now, limit: batch)
                case .appBans: try context.tx.expiredAppBans(at: now, limit: batch)
                }
            var handled = 0
            for entry in expired {
                // The rest of the batch is still expired, so the next step finds it again.
                if handled > 0, ContinuousClock.now - started >= stepTime { break }
                handled += 1
                var appContext = WriteContext(tx: context.tx, caller: ValidatedCaller(app: entry.app), now: now)
                switch sweep {
                case .bans:
                    var access = try appContext.access(entry.guid)
                    guard let ban = try context.tx.ban(groupID: access.groupID, uid: entry.uid), !ban.isActive(at: now)
                    else { continue }
                    try appContext.expire(ban, in: &access)
                    try appContext.saveCounters(&access)
                case .mutes:
                    var access = try appContext.access(entry.guid)
                    let membership = try context.tx.membership(groupID: access.groupID, uid: entry.uid)
                    let state = MuteState(membership, at: now)
                    guard case .expired = state else { continue }
                    let user = try context.tx.user(appID: entry.appID, uid: entry.uid)?.user ?? User(uid: entry.uid)
                    try appContext.expireMute(state, of: user, in: &access)
                    try appContext.saveCounters(&access)
                case .appBans:
                    guard case .expired(let ban) = try appContext.appBanState(of: entry.uid) else { continue }
                    try appContext.expireAppBan(ban)
                }
            }
            return (handled, handled < expired.count || expired.count >= batch)
        }) { result in
            switch result {
            case .failure(let error): completion(.failure(error))
            case .success(let step) where step.more:
                self.countSwept(sweep, step.swept)
                self.sweepStep(sweep, total: total + step.swept, completion: completion)
            case .success(let step):
                self.countSwept(sweep, step.swept)
                completion(.success(total + step.swept))
            }
        }
    }

    private func countSwept(_ sweep: Sweep, _ count: Int) {
        switch sweep {
        case .bans: expiredBansSwept.add(UInt64(count), ordering: .relaxed)
        case .mutes: expiredMutesSwept.add(UInt64(count), ordering: .relaxed)
        case .appBans: expiredAppBansSwept.add(UInt64(count), ordering: .relaxed)
        }
    }

    private func pruneStep(
        report: MaintenanceReport, completion: @escaping @Sendable (Result<MaintenanceReport, ModerationError>) -> Void
    ) {
        let batch = configuration.maintenanceBatchSize
        let retention = configuration.actionRetentionMs
        let window = configuration.idempotencyWindowMs
        maintenanceWrite({ (context: inout WriteContext) throws(ModerationError) -> (Int, Int, Int) in
            let actions = try context.tx.pruneActions(before: context.now - retention, limit: batch)
            let replies = try context.tx.purgeIdempotentReplies(before: context.now - window, limit: batch)
            let invites = try context.tx.purgeExpiredInvites(at: context.now, limit: batch)
            return (actions, replies, invites)
        }) { result in
            switch result {
            case .failure(let error):
                completion(.failure(error))
            case .success(let (actions, replies, invites)):
                var report = report
                report.prunedActions += actions
                report.purgedReplies += replies
                report.purgedInvites += invites
                if actions >= batch || replies >= batch || invites >= batch {
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
                    if case .done(let result, _) = outcome { completion(result) }
                },
                body: body))
    }
}
