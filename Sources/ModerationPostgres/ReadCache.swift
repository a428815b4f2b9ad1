internal import Moderation
internal import ModerationStoreSupport
internal import Synchronization

/// What reads found in PostgreSQL — groups, memberships and first member pages — kept per app
/// for the app's data version they were read at, so that a read can be answered without a
/// transaction of its own (`CachedRead`).
///
/// **Exact, across instances.** Every transaction that writes an app's data bumps the app's
/// `data_version` under the app's lock (`PostgresSession.commitWrite`), whichever instance runs
/// it. An entry read in a snapshot where the app was at version v is what any snapshot at v
/// would read. A read uses entries only at a version it checked in the database after its call
/// arrived (`check`), so it shows every write acknowledged before then, on any instance. One
/// check serves every read that arrived before it started: the checks, not the reads, cost a
/// round trip.
///
/// Apps are never deleted and keep their key, and a group's key is never reused, so those
/// mappings stay true without a version.
final class ReadCache: Sendable {
    typealias MembershipKey = GroupUserKey

    struct MemberPageKey: Hashable {
        let groupID: Int64
        let limit: Int
    }

    /// One app's entries, all read at `version`.
    struct AppEntries {
        var version: UInt64
        /// By guid; `.some(nil)`: the app had no such group.
        var groups: [String: StoredGroup?] = [:]
        var memberships: [MembershipKey: Membership?] = [:]
        var memberPages: [MemberPageKey: [Member]] = [:]
        /// What the entries count against the capacity: one each, and a page one per member too.
        var weight = 0
    }

    /// A check of an app's version: when it was sent and what it found — the app's data version
    /// and the version of its bans from the app (`AppBanSets`), read together.
    struct Check {
        let startedAt: UInt64
        let version: UInt64
        var appBansVersion: UInt64 = 0
    }

    private struct State {
        /// Bumped by `clear`: what a read learned before it is not kept.
        var generation: UInt64 = 0
        var apps: [Int64: AppEntries] = [:]
        var appIDs: [String: Int64] = [:]
        var appOfGroup: [Int64: Int64] = [:]
        var checks: [Int64: Check] = [:]
        var weight = 0
    }

    private let state = Mutex(State())
    /// Entries kept at most: groups, memberships, and pages with one more for each member they
    /// show (a page of 30 weighs 31); 0 turns the cache off.
    let capacity: Int
    private let counters = Counters()

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    var isEnabled: Bool { capacity > 0 }

    /// The current generation: a read takes it at its start and passes it with what it keeps.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Forgets everything, and refuses what reads begun before learned: a reader connection
    /// broke, and the next may reach another server (after a failover a version may come back
    /// with other data under it, if the new primary lost commits).
    func clear() {
        counters.record(.clear)
        state.withLock { state in
            state.generation += 1
            state.apps.removeAll()
            state.appIDs.removeAll()
            state.appOfGroup.removeAll()
            state.checks.removeAll()
            state.weight = 0
        }
    }

    // MARK: Keys that never change

    func appID(named app: String) -> Int64? {
        state.withLock { $0.appIDs[app] }
    }

    func remember(appID: Int64, named app: String, generation: UInt64) {
        guard isEnabled else { return }
        state.withLock { state in
            guard state.generation == generation else { return }
            state.appIDs[app] = appID
        }
    }

    func appOf(groupID: Int64) -> Int64? {
        state.withLock { $0.appOfGroup[groupID] }
    }

    // MARK: Checks

    /// The app's version as found by a check sent at or after `instant`, if there was one.
    func version(of appID: Int64, checkedSince instant: UInt64) -> UInt64? {
        check(of: appID, since: instant)?.version
    }

    /// The check of the app sent at or after `instant`, if there was one.
    func check(of appID: Int64, since instant: UInt64) -> Check? {
        let found = state.withLock { state -> Check? in
            guard let check = state.checks[appID], check.startedAt >= instant else { return nil }
            return check
        }
        if found != nil { counters.record(.sharedCheck) }
        return found
    }

    /// Records a check sent at `startedAt` that found the app at `version`, its bans from the
    /// app at `appBansVersion` (the latest check is kept), and forgets the app's entries when
    /// they are older than that.
    func recordCheck(
        appID: Int64, startedAt: UInt64, version: UInt64, appBansVersion: UInt64 = 0, generation: UInt64
    ) {
        counters.record(.check)
        state.withLock { state in
            guard state.generation == generation else { return }
            if let known = state.checks[appID], known.startedAt > startedAt { return }
            state.checks[appID] = Check(startedAt: startedAt, version: version, appBansVersion: appBansVersion)
            if let entries = state.apps[appID], entries.version < version {
                state.weight -= entries.weight
                state.apps[appID] = AppEntries(version: version)
            }
        }
    }

    // MARK: Entries

    /// The group as read at `version`: nil when not kept, `.some(nil)` when it did not exist.
    func group(appID: Int64, guid: String, version: UInt64) -> StoredGroup?? {
        lookup(appID: appID, version: version) { $0.groups[guid] }
    }

    func membership(appID: Int64, groupID: Int64, uid: String, version: UInt64) -> Membership?? {
        lookup(appID: appID, version: version) { $0.memberships[MembershipKey(groupID: groupID, uid: uid)] }
    }

    func memberPage(appID: Int64, groupID: Int64, limit: Int, version: UInt64) -> [Member]? {
        lookup(appID: appID, version: version) { $0.memberPages[MemberPageKey(groupID: groupID, limit: limit)] }
    }

    func keep(group: StoredGroup?, guid: String, appID: Int64, version: UInt64, generation: UInt64) {
        store(appID: appID, version: version, generation: generation, weight: 1) { state, entries in
            if let group { state.appOfGroup[group.id] = appID }
            return entries.groups.updateValue(group, forKey: guid) == nil ? 0 : 1
        }
    }

    func keep(membership: Membership?, groupID: Int64, uid: String, appID: Int64, version: UInt64, generation: UInt64) {
        store(appID: appID, version: version, generation: generation, weight: 1) { _, entries in
            entries.memberships.updateValue(membership, forKey: MembershipKey(groupID: groupID, uid: uid)) == nil
                ? 0 : 1
        }
    }

    func keep(memberPage: [Member], groupID: Int64, limit: Int, appID: Int64, version: UInt64, generation: UInt64) {
        store(appID: appID, version: version, generation: generation, weight: 1 + memberPage.count) { _, entries in
            let replaced = entries.memberPages.updateValue(
                memberPage, forKey: MemberPageKey(groupID: groupID, limit: limit))
            return replaced.map { 1 + $0.count } ?? 0
        }
    }

    private func lookup<Value>(appID: Int64, version: UInt64, _ find: (AppEntries) -> Value?) -> Value? {
        guard isEnabled else { return nil }
        let found = state.withLock { state -> Value? in
            guard let entries = state.apps[appID], entries.version == version else { return nil }
            return find(entries)
        }
        counters.record(found == nil ? .miss : .hit)
        return found
    }

    /// Adds an entry of `weight` read at `version` (`add` answers the weight of the entry it
    /// replaced), unless the cache was cleared since the read began: entries of an older version make way, and an entry older than the app's kept
    /// ones is dropped. At capacity, everything goes and the cache starts again.
    private func store(
        appID: Int64, version: UInt64, generation: UInt64, weight: Int, _ add: (inout State, inout AppEntries) -> Int
    ) {
        guard isEnabled else { return }
        state.withLock { state in
            guard state.generation == generation else { return }
            var entries = state.apps.removeValue(forKey: appID) ?? AppEntries(version: version)
            defer { state.apps[appID] = entries }
            if entries.version > version { return }
            if entries.version < version {
                state.weight -= entries.weight
                entries = AppEntries(version: version)
            }
            if state.weight + weight > capacity {
                // This app's entries too: they are out of `apps` while this runs.
                state.apps.removeAll()
                state.appOfGroup.removeAll()
                entries = AppEntries(version: version)
                state.weight = 0
            }
            let added = weight - add(&state, &entries)
            entries.weight += added
            state.weight += added
        }
    }

    // MARK: Statistics

    /// Lookups answered and not, version checks sent and shared, and emptyings after a broken
    /// connection, since the store opened.
    struct Statistics: Sendable, Equatable {
        var hits: UInt64 = 0
        var misses: UInt64 = 0
        var checks: UInt64 = 0
        var sharedChecks: UInt64 = 0
        var clears: UInt64 = 0
    }

    var statistics: Statistics { counters.snapshot }

    /// Relaxed counters: written by every reading thread, read by the metrics.
    private final class Counters: Sendable {
        enum Counter { case hit, miss, check, sharedCheck, clear }

        private let hits = Atomic<UInt64>(0)
        private let misses = Atomic<UInt64>(0)
        private let checks = Atomic<UInt64>(0)
        private let sharedChecks = Atomic<UInt64>(0)
        private let clears = Atomic<UInt64>(0)

        func record(_ counter: Counter) {
            switch counter {
            case .hit: hits.wrappingAdd(1, ordering: .relaxed)
            case .miss: misses.wrappingAdd(1, ordering: .relaxed)
            case .check: checks.wrappingAdd(1, ordering: .relaxed)
            case .sharedCheck: sharedChecks.wrappingAdd(1, ordering: .relaxed)
            case .clear: clears.wrappingAdd(1, ordering: .relaxed)
            }
        }

        var snapshot: Statistics {
            Statistics(
                hits: hits.load(ordering: .relaxed), misses: misses.load(ordering: .relaxed),
                checks: checks.load(ordering: .relaxed), sharedChecks: sharedChecks.load(ordering: .relaxed),
                clears: clears.load(ordering: .relaxed))
        }
    }
}
