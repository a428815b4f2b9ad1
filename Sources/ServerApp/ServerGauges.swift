internal import CSystemShims
import Moderation
import ModerationEvents
import ModerationPostgres
import ModerationSQLite
import RPCCore

/// The values `/metrics` samples at scrape time rather than counts call by call.
enum ServerGauges {
    /// - Parameter store: the store's own samples (`storeSamples` of its statistics).
    static func sample(
        hub: EventHub, service: ModerationService, store: [ServerMetrics.Sample], apps: [String]
    ) -> [ServerMetrics.Sample] {
        var samples = [
            ServerMetrics.Sample(
                name: "moderation_subscriptions_open", help: "Live event-stream subscriptions.", type: "gauge",
                value: Double(hub.subscriptionCount)),
            ServerMetrics.Sample(
                name: "moderation_ban_expiries_swept_total",
                help: "Expired bans recorded as unbanned (reason expired) by the sweeper.",
                type: "counter", value: Double(service.expiredBansSweptCount)),
            ServerMetrics.Sample(
                name: "moderation_mute_expiries_swept_total",
                help: "Expired mutes recorded as unmuted (reason expired) by the sweeper.",
                type: "counter", value: Double(service.expiredMutesSweptCount)),
            ServerMetrics.Sample(
                name: "moderation_app_ban_expiries_swept_total",
                help: "Expired bans from the app recorded as appUnbanned (reason expired) by the sweeper.",
                type: "counter", value: Double(service.expiredAppBansSweptCount)),
        ]
        let rules = service.contentRuleStatistics
        samples += [
            ServerMetrics.Sample(
                name: "moderation_content_rule_sets",
                help: "Content rule sets compiled in memory (the apps' and groups').",
                type: "gauge", value: Double(rules.sets)),
            ServerMetrics.Sample(
                name: "moderation_content_rules", help: "Content rules across the sets in memory.", type: "gauge",
                value: Double(rules.rules)),
            ServerMetrics.Sample(
                name: "moderation_content_rule_compiles_total", help: "Content rule sets compiled since start.",
                type: "counter", value: Double(rules.compiles)),
            ServerMetrics.Sample(
                name: "moderation_content_rule_compile_failures_total",
                help: "Content rule sets Hyperscan refused as a whole (the set in place stayed).", type: "counter",
                value: Double(rules.compileFailures)),
            ServerMetrics.Sample(
                name: "moderation_content_rule_compile_seconds_total",
                help: "Time spent compiling content rule sets, off the event loop.", type: "counter",
                value: rules.compileSeconds),
        ]
        for app in apps {
            let head =
                (try? service.withActionLog(app: app) { (log) throws(ModerationError) -> UInt64 in try log.headSeq() })
                ?? 0
            samples.append(
                ServerMetrics.Sample(
                    name: "moderation_action_log_head_seq", help: "Seq of the newest action in each app's log.",
                    type: "gauge",
                    labels: [("app", app)], value: Double(head)))
        }
        for (app, seq) in hub.dispatchedSeqs() {
            samples.append(
                ServerMetrics.Sample(
                    name: "moderation_events_dispatched_seq",
                    help: "Seq of the last action handed to subscribers, by app (apps with a subscription open).",
                    type: "gauge", labels: [("app", app)], value: Double(seq)))
        }
        samples += store
        samples += processSamples()
        return samples
    }

    /// The memory budget: its limit (when there is one) and what it counts, by kind.
    static func budgetSamples(_ budget: MemoryBudget) -> [ServerMetrics.Sample] {
        var samples: [ServerMetrics.Sample] = []
        if budget.isLimited {
            samples.append(
                ServerMetrics.Sample(
                    name: "mrpc_memory_budget_bytes",
                    help: "What clients may make the server hold (--memory-budget).", type: "gauge",
                    value: Double(budget.limit)))
        }
        for kind in MemoryBudget.Kind.allCases {
            samples.append(
                ServerMetrics.Sample(
                    name: "mrpc_memory_budget_used_bytes",
                    help: "What clients make the server hold now, counted against the memory budget, by kind.",
                    type: "gauge", labels: [("kind", Self.name(of: kind))], value: Double(budget.inUse(kind))))
        }
        return samples
    }

    /// The access log's dropped lines (0 without an access log, so dashboards find the series).
    static func accessLogSamples(_ accessLog: AccessLog?) -> [ServerMetrics.Sample] {
        [
            ServerMetrics.Sample(
                name: "moderation_access_log_dropped_total",
                help: "Access-log lines dropped because the log writer could not keep up.", type: "counter",
                value: Double(accessLog?.droppedLines ?? 0))
        ]
    }

    static func name(of kind: MemoryBudget.Kind) -> String {
        switch kind {
        case .outbound: "outbound"
        case .inbound: "inbound"
        case .compression: "compression"
        case .subscriptions: "subscriptions"
        }
    }

    /// The process's standard series, named, typed and described as Prometheus' official
    /// clients export them (client_golang's process collector): CPU time, start time, file
    /// descriptors, virtual and resident memory; then this server's own, the malloc heap in use
    /// vs held from the system (the difference is what freeing left behind in the allocator's
    /// arenas). Without `/proc` only resident memory and the heap are reported.
    static func processSamples() -> [ServerMetrics.Sample] {
        var inUse: UInt64 = 0
        var system: UInt64 = 0
        cshim_heap_bytes(&inUse, &system)
        var samples: [ServerMetrics.Sample] = []
        if let process = ProcessStatistics.current() {
            samples = [
                ServerMetrics.Sample(
                    name: "process_cpu_seconds_total", help: "Total user and system CPU time spent in seconds.",
                    type: "counter", value: process.cpuSeconds),
                ServerMetrics.Sample(
                    name: "process_open_fds", help: "Number of open file descriptors.", type: "gauge",
                    value: Double(process.openFDs)),
                ServerMetrics.Sample(
                    name: "process_max_fds", help: "Maximum number of open file descriptors.", type: "gauge",
                    value: Double(process.maxFDs)),
                ServerMetrics.Sample(
                    name: "process_virtual_memory_bytes", help: "Virtual memory size in bytes.", type: "gauge",
                    value: Double(process.virtualMemoryBytes)),
                ServerMetrics.Sample(
                    name: "process_virtual_memory_max_bytes",
                    help: "Maximum amount of virtual memory available in bytes.", type: "gauge",
                    value: Double(process.virtualMemoryMaxBytes)),
                ServerMetrics.Sample(
                    name: "process_start_time_seconds", help: "Start time of the process since unix epoch in seconds.",
                    type: "gauge", value: process.startTimeSeconds),
            ]
        }
        return samples + [
            ServerMetrics.Sample(
                name: "process_resident_memory_bytes", help: "Resident memory size in bytes.", type: "gauge",
                value: Double(cshim_resident_bytes())),
            ServerMetrics.Sample(
                name: "process_heap_in_use_bytes", help: "Bytes of the malloc heap allocated and not freed.",
                type: "gauge",
                value: Double(inUse)),
            ServerMetrics.Sample(
                name: "process_heap_system_bytes", help: "Bytes the malloc heap holds from the system.", type: "gauge",
                value: Double(system)),
        ]
    }

    /// `moderation_build_info`: always 1, its labels saying which build runs (as
    /// `moderation-server --version`: the version, `-dev` unless a release, and the commit), on which store, built by which Swift compiler — the
    /// `…_build_info` convention, joined onto other series with `on() group_left`.
    static func buildInfoSamples(store: StoreKind) -> [ServerMetrics.Sample] {
        [
            ServerMetrics.Sample(
                name: "moderation_build_info",
                help: "The running build: version, git revision, store and Swift compiler as labels; the value is 1.",
                type: "gauge",
                labels: [
                    ("version", ServerInfo.buildVersion), ("revision", ServerInfo.revision), ("store", store.rawValue),
                    ("swift", ServerInfo.swiftVersion),
                ],
                value: 1)
        ]
    }

    /// `moderation_store_available`: 1 while the store answers, 0 during an outage.
    static func availabilitySample(_ available: Bool) -> ServerMetrics.Sample {
        ServerMetrics.Sample(
            name: "moderation_store_available",
            help: "1 while the store answers; 0 while PostgreSQL does not answer its connections.", type: "gauge",
            value: available ? 1 : 0)
    }

    /// What either store reports alike: whether it answers, its commits (`commitsHelp` says whose
    /// writer made them) and its batch sizes.
    private static func commitSamples(
        available: Bool, commitsHelp: String, commits: UInt64, batchSizeBounds: [Int], batchSizes: [UInt64],
        committedWrites: UInt64
    ) -> [ServerMetrics.Sample] {
        let commitCount = ServerMetrics.Sample(
            name: "moderation_store_commits_total", help: commitsHelp, type: "counter", value: Double(commits))
        let batchSize = histogram(
            "moderation_store_commit_batch_size", help: "Writes per committed transaction (group commit).",
            bounds: batchSizeBounds.map { String($0) }, counts: batchSizes, sum: Double(committedWrites))
        return [availabilitySample(available), commitCount] + batchSize
    }

    /// The SQLite store's commits, batch sizes (writes per transaction) and WAL flush latency.
    static func storeSamples(_ statistics: StoreStatistics) -> [ServerMetrics.Sample] {
        // The embedded store is a file of this process: it answers as long as the process runs.
        var samples = commitSamples(
            available: true, commitsHelp: "Transactions the store's writer committed.", commits: statistics.commits,
            batchSizeBounds: StoreStatistics.batchSizeBounds, batchSizes: statistics.batchSizes,
            committedWrites: statistics.committedWrites)
        samples += histogram(
            "moderation_store_fsync_seconds", help: "Time to flush the WAL to disk before acknowledging commits.",
            bounds: StoreStatistics.syncSecondsBounds.map { String($0) }, counts: statistics.syncLatencies,
            sum: statistics.syncSeconds)
        return samples
    }

    /// The PostgreSQL store's commits, batch sizes, COMMIT latency (the WAL flush included), and
    /// what sharing the database with other writers costs (deferred writes, retried batches,
    /// reconnections, actions of other instances read to fill a gap).
    static func storeSamples(_ statistics: PostgresStoreStatistics, available: Bool) -> [ServerMetrics.Sample] {
        var samples = commitSamples(
            available: available, commitsHelp: "Transactions the store's writers committed.",
            commits: statistics.commits, batchSizeBounds: PostgresStoreStatistics.batchSizeBounds,
            batchSizes: statistics.batchSizes, committedWrites: statistics.committedWrites)
        samples += histogram(
            "moderation_store_commit_seconds",
            help: "Time from COMMIT sent to its answer (synchronous_commit=on: the WAL flush included).",
            bounds: PostgresStoreStatistics.commitSecondsBounds.map { String($0) },
            counts: statistics.commitLatencies, sum: statistics.commitSeconds)
        let counters: [(String, String, UInt64)] = [
            (
                "moderation_store_deferred_writes_total",
                "Writes put off to the next batch because another writer held their app.", statistics.deferredWrites
            ),
            (
                "moderation_store_retried_batches_total",
                "Transactions rolled back and run again without a failed write.", statistics.retries
            ),
            ("moderation_store_reconnects_total", "Connections to PostgreSQL opened again.", statistics.reconnects),
            (
                "moderation_store_gap_actions_read_total",
                "Actions other instances committed, read from the log for this instance's event streams.",
                statistics.actionsReadForGaps
            ),
            (
                "moderation_store_notifications_total",
                "Commit notifications (LISTEN) received from the instances sharing the database.",
                statistics.notifications
            ),
            (
                "moderation_store_watcher_reconnects_total",
                "Times the connection following other instances' commits was opened again.",
                statistics.watcherReconnects
            ),
            (
                "moderation_store_heads_polled_total",
                "Apps' head seqs read by the polls that back up commit notifications (every app's one poll in 40, else followed apps').",
                statistics.headsPolled
            ),
            (
                "moderation_store_read_cache_hits_total",
                "Lookups of reads answered from the read cache (groups, memberships, first member pages).",
                statistics.readCacheHits
            ),
            (
                "moderation_store_read_cache_misses_total",
                "Lookups of reads the read cache did not hold, read from PostgreSQL.", statistics.readCacheMisses
            ),
            (
                "moderation_store_read_cache_checks_total",
                "Checks of an app's data version sent to PostgreSQL for the read cache.", statistics.readCacheChecks
            ),
            (
                "moderation_store_read_cache_shared_checks_total",
                "Reads that used a data-version check another read sent after they arrived.",
                statistics.readCacheSharedChecks
            ),
            (
                "moderation_store_read_cache_clears_total",
                "Times the read cache was emptied because a reader connection to PostgreSQL broke.",
                statistics.readCacheClears
            ),
            (
                "moderation_store_prefetched_standings_total",
                "Users' standings in groups read ahead, a batch at a time, for the writes that named them.",
                statistics.prefetchedStandings
            ),
            (
                "moderation_store_writes_joined_while_locking_total",
                "Writes queued while a writer took its batch's first app lock, run in that batch.",
                statistics.joinedWhileLocking
            ),
        ]
        for (name, help, value) in counters {
            samples.append(ServerMetrics.Sample(name: name, help: help, type: "counter", value: Double(value)))
        }
        samples.append(
            ServerMetrics.Sample(
                name: "moderation_store_app_lock_wait_seconds_total",
                help: "Seconds writers spent taking their batches' first app lock (waiting for other instances).",
                type: "counter", value: statistics.appLockWaitSeconds))
        samples.append(
            ServerMetrics.Sample(
                name: "moderation_store_read_ahead_seconds_total",
                help: "Seconds writers spent reading their batches ahead, under the apps' locks.",
                type: "counter", value: statistics.readAheadSeconds))
        return samples
    }

    /// A Prometheus histogram from per-bucket (not cumulative) counts, one more than `bounds`.
    private static func histogram(_ name: String, help: String, bounds: [String], counts: [UInt64], sum: Double)
        -> [ServerMetrics.Sample]
    {
        var samples: [ServerMetrics.Sample] = []
        var cumulative: UInt64 = 0
        for (index, bound) in bounds.enumerated() {
            cumulative += counts[index]
            samples.append(
                ServerMetrics.Sample(
                    name: name, help: index == 0 ? help : "", type: "histogram", labels: [("le", bound)],
                    value: Double(cumulative)))
        }
        cumulative += counts.last ?? 0
        samples.append(
            ServerMetrics.Sample(
                name: name, help: "", type: "histogram", labels: [("le", "+Inf")], value: Double(cumulative)))
        samples.append(ServerMetrics.Sample(name: name + "_sum", help: "", type: "histogram", value: sum))
        samples.append(
            ServerMetrics.Sample(name: name + "_count", help: "", type: "histogram", value: Double(cumulative)))
        return samples
    }
}
