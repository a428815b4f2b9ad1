internal import Glibc
internal import Synchronization

/// The moderation service façade: every RPC of `moderation.v1` as a call on this object.
///
/// Reads are synchronous and run on the calling thread against a snapshot of the store; they
/// never wait for writes. Mutations validate their arguments (and do any slow password hashing)
/// on the calling thread, then run on the store's writer, and call `completion` only after the
/// change is durable. The rules — permission matrix, the fixed order of checks, error codes,
/// actions — are documented in docs/SERVICE.md.
public final class ModerationService: Sendable {
    let store: any ModerationStore
    let clock: @Sendable () -> Int64
    let configuration: Configuration
    let listeners: CommitListeners
    let memberPages: MemberPageCache
    private let maintenance: Mutex<MaintenanceLoop?>
    /// When the maintenance loop last pruned (the service's clock); nil before its first step.
    let lastScheduledPrune = Mutex<Int64?>(nil)
    /// Expired bans the sweeper has recorded as `unbanned` since start (for metrics).
    let expiredBansSwept = Atomic<UInt64>(0)
    /// Expired mutes the sweeper has recorded as `unmuted` since start (for metrics).
    let expiredMutesSwept = Atomic<UInt64>(0)
    /// Expired bans from the app the sweeper has recorded as `appUnbanned` since start (for
    /// metrics).
    let expiredAppBansSwept = Atomic<UInt64>(0)
    /// Wrong group passwords per (app, group, user), to stop brute force through JoinGroup: in the
    /// store's shared ledger when it has one, else in memory.
    let passwordAttempts: PasswordAttemptLimiter
    /// The content rule sets, compiled, for CheckPost's scan.
    let contentRules: ContentRuleSets
    /// Called after each webhook change this service committed (`addWebhookChangeListener`).
    let webhookChangeListeners = Mutex<[@Sendable () -> Void]>([])

    /// The store's reads share a check when started together (`ModerationStore.readsShareChecks`).
    public var readsShareChecks: Bool { store.readsShareChecks }

    /// Whether `joinGroup` with `password` may hold up its calling thread before handing the write
    /// to the store: a password is verified with a deliberately slow hash, after a check of the
    /// wrong-password ledger (over the network when shared: PostgreSQL's). A join without a
    /// password is checked in its write and starts as quickly as any other mutation.
    public func joinMayBlock(password: String) -> Bool {
        !password.isEmpty
    }

    /// - Parameters:
    ///   - store: where the data lives; the service sets its commit handler.
    ///   - now: the clock, Unix milliseconds (tests inject one).
    ///   - configuration: password hashing, retention and maintenance settings.
    public init(
        store: some ModerationStore, now: @escaping @Sendable () -> Int64 = ModerationService.systemClock,
        configuration: Configuration = Configuration()
    ) {
        self.store = store
        self.clock = now
        self.configuration = configuration
        let listeners = CommitListeners()
        self.listeners = listeners
        memberPages = MemberPageCache(capacity: configuration.memberPageCacheGroups)
        passwordAttempts = PasswordAttemptLimiter(
            limit: configuration.wrongPasswordLimit, windowMs: configuration.wrongPasswordWindowMs,
            sharedLedger: store.passwordAttempts)
        store.setCommitHandler(
            CommitHandler(
                follows: listeners.follows, followedApps: listeners.followedApps, deliver: listeners.deliver))
        contentRules = ContentRuleSets(store: store, pollIntervalMs: configuration.contentRulePollMs)
        maintenance = Mutex(nil)
        if configuration.maintenanceIntervalMs > 0 {
            let loop = MaintenanceLoop(intervalMs: configuration.maintenanceIntervalMs) { [weak self] in
                self?.runScheduledMaintenanceAndWait()
            }
            maintenance.withLock { $0 = loop }
        }
    }

    /// Unix milliseconds from the system's real-time clock.
    public static let systemClock: @Sendable () -> Int64 = {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// Registers `listener` to be called once per committed batch with its actions in seq order,
    /// after the batch is durable and before its completions run. It runs on the store's
    /// completer thread, batch after batch: keep it short (hand the actions off).
    /// - Parameters:
    ///   - follows: whether the listener wants `app`'s actions now (by default, every app's).
    ///     The store may leave out the actions of apps no listener follows; see
    ///     `CommitHandler.follows` for when a new follower must start counting.
    ///   - followedApps: the apps `follows` is true of now, when the listener can list them
    ///     (`CommitHandler.followedApps`); nil for a listener that cannot.
    public func addCommitListener(
        following follows: @escaping @Sendable (_ app: String) -> Bool = { _ in true },
        listing followedApps: (@Sendable () -> Set<String>)? = nil,
        _ listener: @escaping @Sendable ([ActionRecord]) -> Void
    ) {
        listeners.add(follows: follows, followedApps: followedApps, listener)
    }

    deinit {
        shutdown()
    }

    /// Expired bans the sweeper has recorded as `unbanned` (reason "expired") since start.
    public var expiredBansSweptCount: UInt64 { expiredBansSwept.load(ordering: .relaxed) }

    /// Expired mutes the sweeper has recorded as `unmuted` (reason "expired") since start.
    public var expiredMutesSweptCount: UInt64 { expiredMutesSwept.load(ordering: .relaxed) }

    /// Expired bans from the app the sweeper has recorded as `appUnbanned` (reason "expired")
    /// since start.
    public var expiredAppBansSweptCount: UInt64 { expiredAppBansSwept.load(ordering: .relaxed) }

    /// The content rule sets compiled in memory, and what compiling them has cost since start.
    public var contentRuleStatistics: ContentRuleStatistics { contentRules.statistics }

    /// Stops the maintenance loop, if any, and the content rules' compile thread. The store stays
    /// open; close it after this.
    public func shutdown() {
        let loop = maintenance.withLock { loop in
            defer { loop = nil }
            return loop
        }
        loop?.stop()
        contentRules.close()
    }
}
