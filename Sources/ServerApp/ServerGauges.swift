internal import CSystemShims
import Moderation
import ModerationEvents
import ModerationSQLite
import RPCCore

/// The values `/metrics` samples at scrape time rather than counts call by call.
enum ServerGauges {
    static func sample(hub: EventHub, service: ModerationService, store: SQLiteStore, apps: [String]) -> [ServerMetrics
        .Sample]
    {
        var samples = [
            ServerMetrics.Sample(
                name: "moderation_subscriptions_open", help: "Live event-stream subscriptions.", type: "gauge",
                value: Double(hub.subscriptionCount)),
            ServerMetrics.Sample(
                name: "moderation_ban_expiries_swept_total",
                help: "Expired bans recorded as unbanned (reason expired) by the sweeper.",
                type: "counter", value: Double(service.expiredBansSweptCount)),
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
        samples += storeSamples(store.statistics)
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

    static func name(of kind: MemoryBudget.Kind) -> String {
        switch kind {
        case .outbound: "outbound"
        case .inbound: "inbound"
        case .compression: "compression"
        case .subscriptions: "subscriptions"
        }
    }

    /// The process's memory: resident set, and the malloc heap in use vs held from the system
    /// (the difference is what freeing left behind in the allocator's arenas).
    static func processSamples() -> [ServerMetrics.Sample] {
        var inUse: UInt64 = 0
        var system: UInt64 = 0
        cshim_heap_bytes(&inUse, &system)
        return [
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

    /// The store's commits, batch sizes (writes per transaction) and WAL flush latency.
    static func storeSamples(_ statistics: StoreStatistics) -> [ServerMetrics.Sample] {
        var samples = [
            ServerMetrics.Sample(
                name: "moderation_store_commits_total", help: "Transactions the store's writer committed.",
                type: "counter",
                value: Double(statistics.commits))
        ]
        var cumulative: UInt64 = 0
        for (index, bound) in StoreStatistics.batchSizeBounds.enumerated() {
            cumulative += statistics.batchSizes[index]
            samples.append(
                ServerMetrics.Sample(
                    name: "moderation_store_commit_batch_size",
                    help: "Writes per committed transaction (group commit).", type: "histogram",
                    labels: [("le", String(bound))], value: Double(cumulative)))
        }
        cumulative += statistics.batchSizes.last ?? 0
        samples.append(
            ServerMetrics.Sample(
                name: "moderation_store_commit_batch_size", help: "", type: "histogram",
                labels: [("le", "+Inf")], value: Double(cumulative)))
        samples.append(
            ServerMetrics.Sample(
                name: "moderation_store_commit_batch_size_sum", help: "", type: "histogram",
                value: Double(statistics.committedWrites)))
        samples.append(
            ServerMetrics.Sample(
                name: "moderation_store_commit_batch_size_count", help: "", type: "histogram",
                value: Double(statistics.commits)))
        cumulative = 0
        for (index, bound) in StoreStatistics.syncSecondsBounds.enumerated() {
            cumulative += statistics.syncLatencies[index]
            samples.append(
                ServerMetrics.Sample(
                    name: "moderation_store_fsync_seconds",
                    help: "Time to flush the WAL to disk before acknowledging commits.",
                    type: "histogram", labels: [("le", String(bound))], value: Double(cumulative)))
        }
        cumulative += statistics.syncLatencies.last ?? 0
        samples.append(
            ServerMetrics.Sample(
                name: "moderation_store_fsync_seconds", help: "", type: "histogram",
                labels: [("le", "+Inf")], value: Double(cumulative)))
        samples.append(
            ServerMetrics.Sample(
                name: "moderation_store_fsync_seconds_sum", help: "", type: "histogram",
                value: statistics.syncSeconds))
        samples.append(
            ServerMetrics.Sample(
                name: "moderation_store_fsync_seconds_count", help: "", type: "histogram",
                value: Double(statistics.syncs)))
        return samples
    }
}
