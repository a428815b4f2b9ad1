internal import ContentMatching
internal import Synchronization
internal import ThreadSupport

/// The compiled content rule sets of every app and group, kept in step with the store.
///
/// One thread compiles: every `pollIntervalMs` (and at once when `refresh` asks) it reads every
/// set's version from the store, reloads the sets whose version changed, compiles each into one
/// Hyperscan database and swaps it in; a set whose group is gone is dropped. Changes made through
/// this server are asked for with `refresh`; changes other servers make on a shared store
/// (PostgreSQL) are found by the poll. CheckPost reads `sets(appID:guid:)` on the loop: a lookup
/// under a mutex, never a compile, so calls meanwhile use the previous set.
final class ContentRuleSets: Sendable {
    /// A compiled set with what the scan's matches need: each rule's action.
    final class Published: Sendable {
        let compiled: CompiledRuleSet
        let actions: [UInt64: ContentAction]
        let version: UInt64

        init(compiled: CompiledRuleSet, actions: [UInt64: ContentAction], version: UInt64) {
            self.compiled = compiled
            self.actions = actions
            self.version = version
        }
    }

    struct Key: Hashable, Sendable {
        var appID: Int64
        var guid: String
    }

    /// Requests to the compile thread: versions this server committed, with what to run once
    /// they are in place.
    private struct Requests: Sendable {
        var waiting: [(version: ContentRuleSetVersion, then: @Sendable () -> Void)] = []
        var closed = false
    }

    private final class Shared: Sendable {
        let published = Mutex<[Key: Published]>([:])
        let requests = ConditionLock(Requests())
        let store: any ModerationStore
        let statistics = Mutex(ContentRuleStatistics())

        init(store: any ModerationStore) {
            self.store = store
        }
    }

    private let shared: Shared
    private let thread = Mutex<WorkerThread?>(nil)

    /// Loads and compiles every set the store holds (on the calling thread: a server starts
    /// with its rules in force), then starts the compile thread.
    init(store: any ModerationStore, pollIntervalMs: Int64) {
        shared = Shared(store: store)
        Self.synchronize(shared)
        let shared = shared
        thread.withLock {
            $0 = WorkerThread(name: "content-rules") { Self.run(shared, pollIntervalMs: pollIntervalMs) }
        }
    }

    deinit {
        close()
    }

    /// The app's set and the group's, when they have rules.
    func sets(appID: Int64, guid: String) -> (app: Published?, group: Published?) {
        shared.published.withLock { published in
            guard !published.isEmpty else { return (nil, nil) }
            return (published[Key(appID: appID, guid: "")], published[Key(appID: appID, guid: guid)])
        }
    }

    /// Runs `then` once the set is compiled at `version` or later (or could not be read: a reply
    /// is never held back for ever).
    func refresh(_ version: ContentRuleSetVersion, then: @escaping @Sendable () -> Void) {
        let accepted = shared.requests.withLock { requests in
            guard !requests.closed else { return false }
            requests.waiting.append((version, then))
            return true
        }
        guard accepted else { return then() }
        shared.requests.broadcast()
    }

    /// What the sets hold and what compiling them has cost, for metrics.
    var statistics: ContentRuleStatistics {
        var statistics = shared.statistics.withLock { $0 }
        shared.published.withLock { published in
            statistics.sets = published.count
            statistics.rules = published.values.reduce(0) { $0 + $1.compiled.rules.count }
        }
        return statistics
    }

    /// Stops the compile thread and waits for it.
    func close() {
        shared.requests.withLock { $0.closed = true }
        shared.requests.broadcast()
        let worker = thread.withLock { thread in
            defer { thread = nil }
            return thread
        }
        worker?.join()
        let left = shared.requests.withLock { requests in
            defer { requests.waiting = [] }
            return requests.waiting
        }
        for request in left { request.then() }
    }

    private static func run(_ shared: Shared, pollIntervalMs: Int64) {
        let interval = Duration.milliseconds(max(pollIntervalMs, 10))
        while true {
            let woken = shared.requests.withLock(
                when: { !$0.waiting.isEmpty || $0.closed }, timeout: interval, { $0.closed }
            )
            if woken == true { return }
            let waiting = shared.requests.withLock { requests in
                defer { requests.waiting = [] }
                return requests.waiting
            }
            synchronize(shared)
            for request in waiting { request.then() }
        }
    }

    /// Brings the published sets in step with the store: one snapshot for the versions and the
    /// rules of the sets that changed, then a compile of each outside it.
    private static func synchronize(_ shared: Shared) {
        let known = shared.published.withLock { $0 }
        let changes: (reload: [(Key, UInt64, [ContentRule])], gone: [Key])
        do {
            changes = try shared.store.read {
                (snapshot: any StoreSnapshot) throws(ModerationError) -> ([(Key, UInt64, [ContentRule])], [Key]) in
                var reload: [(Key, UInt64, [ContentRule])] = []
                var present = Set<Key>()
                for set in try snapshot.contentRuleSetVersions() {
                    let key = Key(appID: set.appID, guid: set.guid)
                    present.insert(key)
                    guard known[key]?.version != set.version else { continue }
                    let rules = try snapshot.contentRules(
                        appID: set.appID, guid: set.guid, afterID: 0, limit: Int(Int32.max))
                    reload.append((key, set.version, rules))
                }
                return (reload, known.keys.filter { !present.contains($0) })
            }
        } catch {
            // The store is unavailable: the sets in place stay until the next poll.
            return
        }
        var compiled: [Key: Published] = [:]
        for (key, version, rules) in changes.reload {
            let engineRules = rules.map {
                ContentMatching.ContentRule(id: $0.id, kind: $0.kind.engineKind, pattern: $0.pattern)
            }
            let started = ContinuousClock.now
            do throws(ContentRuleSetError) {
                let set = try CompiledRuleSet.compile(engineRules)
                var actions: [UInt64: ContentAction] = [:]
                for rule in rules { actions[rule.id] = rule.action }
                compiled[key] = Published(compiled: set, actions: actions, version: version)
                shared.statistics.withLock { $0.record(compileTime: ContinuousClock.now - started, failed: false) }
            } catch {
                // Each rule compiled alone when it was added, so this is Hyperscan refusing the
                // whole set: the previous set stays, at the new version, so it is not retried
                // every poll.
                shared.statistics.withLock { $0.record(compileTime: ContinuousClock.now - started, failed: true) }
                let previous = known[key]
                compiled[key] = Published(
                    compiled: previous?.compiled ?? CompiledRuleSet(), actions: previous?.actions ?? [:],
                    version: version)
            }
        }
        shared.published.withLock { published in
            for key in changes.gone { published[key] = nil }
            published.merge(compiled) { _, new in new }
        }
    }
}

extension ContentRuleKind {
    /// The engine's name for the kind.
    var engineKind: ContentMatching.ContentRule.Kind {
        switch self {
        case .word: .word
        case .regex: .regex
        case .domain: .domain
        }
    }
}
