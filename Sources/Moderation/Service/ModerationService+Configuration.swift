extension ModerationService {
    /// The service's settings: password hashing cost, retention and maintenance.
    public struct Configuration: Sendable {
        /// How group passwords are hashed (argon2id cost).
        public var passwordHasher: PasswordHasher
        /// How long actions stay in the log, in milliseconds (default 7 days).
        public var actionRetentionMs: Int64
        /// How long an idempotency key is remembered, in milliseconds (default 24 h).
        public var idempotencyWindowMs: Int64
        /// How often the maintenance loop sweeps expired bans and prunes old actions and
        /// idempotency keys, in milliseconds; 0 runs none (call `runMaintenance` yourself).
        public var maintenanceIntervalMs: Int64
        /// How often the maintenance loop prunes (actions past the retention, idempotency
        /// replies past their window, expired invites), in milliseconds: the expiry sweep runs
        /// every `maintenanceIntervalMs`, the pruning at most this often. Its cutoffs are hours
        /// and days away, and each pass looks at every app with unpruned actions (30 000 apps:
        /// 62 ms of PostgreSQL's time a pass). `runMaintenance` always prunes.
        public var pruneIntervalMs: Int64
        /// How many rows one maintenance step handles at most, so a step stays short.
        public var maintenanceBatchSize: Int
        /// How long, in milliseconds, one step of the expiry sweep runs before it commits what
        /// it did and leaves the rest of its batch to the next step (at least one expiry a
        /// step). A step holds the writer, and on PostgreSQL its apps' locks: writes queued
        /// behind it wait about this long, not a whole batch's time (on PostgreSQL 500 unmutes
        /// took 70 ms, and a mass expiry held its app's writes to 1.5 k/s while it ran).
        public var maintenanceStepMs: Int64
        /// How many groups' first member page (`ListMembers` without cursor or filters) are
        /// kept in memory, per group version; 0 turns the cache off (see `MemberPageCache`).
        public var memberPageCacheGroups: Int
        /// Wrong passwords a user may try on one group within `wrongPasswordWindowMs` before
        /// joins are refused with `ERR_RATE_LIMITED` (0: no limit).
        public var wrongPasswordLimit: Int
        public var wrongPasswordWindowMs: Int64
        /// How many join requests one group may have pending; one more is `ERR_RATE_LIMITED`
        /// (the service allows 1 000; tests lower it).
        public var maxPendingJoinRequests: Int
        /// How many reports one user may file per hour in an app; one more is `ERR_RATE_LIMITED`
        /// (the service allows 20; tests lower it).
        public var maxReportsPerHour: Int
        /// How often, in milliseconds, the content rules are compared with the store's, to pick
        /// up what other servers changed on a shared store (changes made through this server
        /// apply before their call answers).
        public var contentRulePollMs: Int64
        /// Why a webhook may not point at a URL, or nil when it may (the server's check resolves
        /// the host and refuses private addresses unless allowed). By default: https only.
        public var webhookURLCheck: @Sendable (_ url: String) -> String?

        public init(
            passwordHasher: PasswordHasher = .standard, actionRetentionMs: Int64 = 7 * 24 * 3_600_000,
            idempotencyWindowMs: Int64 = 24 * 3_600_000, maintenanceIntervalMs: Int64 = 0,
            pruneIntervalMs: Int64 = 60_000, maintenanceBatchSize: Int = 500, maintenanceStepMs: Int64 = 10,
            memberPageCacheGroups: Int = 10_000, wrongPasswordLimit: Int = 5,
            wrongPasswordWindowMs: Int64 = 15 * 60_000,
            maxPendingJoinRequests: Int = 1_000, maxReportsPerHour: Int = 20, contentRulePollMs: Int64 = 500,
            webhookURLCheck: @escaping @Sendable (_ url: String) -> String? = Configuration.httpsOnly
        ) {
            self.passwordHasher = passwordHasher
            self.actionRetentionMs = actionRetentionMs
            self.idempotencyWindowMs = idempotencyWindowMs
            self.maintenanceIntervalMs = maintenanceIntervalMs
            self.pruneIntervalMs = pruneIntervalMs
            self.maintenanceBatchSize = maintenanceBatchSize
            self.maintenanceStepMs = maintenanceStepMs
            self.memberPageCacheGroups = memberPageCacheGroups
            self.wrongPasswordLimit = wrongPasswordLimit
            self.wrongPasswordWindowMs = wrongPasswordWindowMs
            self.maxPendingJoinRequests = maxPendingJoinRequests
            self.maxReportsPerHour = maxReportsPerHour
            self.contentRulePollMs = contentRulePollMs
            self.webhookURLCheck = webhookURLCheck
        }

        /// The default `webhookURLCheck`: any https URL.
        public static let httpsOnly: @Sendable (String) -> String? = { url in
            url.lowercased().hasPrefix("https://") && url.utf8.count > 8 ? nil : "only https URLs are allowed"
        }
    }
}
