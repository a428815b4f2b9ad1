internal import Moderation
internal import Synchronization

/// Each app's bans from the app as the per-call check needs them (`AppBanStanding`), kept in
/// memory for the app's `app_bans_version` they were read at: shared by the store's writers and
/// its cached reads (`CachedRead`).
///
/// **Exact, across instances.** Every change to an app's bans bumps its `app_bans_version` in the
/// same statement, under the app's lock, whichever instance makes it; a set read at version v is
/// what any snapshot at v holds. A writer reads the version with the app's lock, a cached read
/// with the app's data version (`ReadCache`'s check, which every write moves too), and each uses
/// a set only at the version it read: a ban another instance committed applies here as soon as
/// the read cache's rules make its writes visible. Version 0: the app never banned anyone, so no
/// set is needed at all.
final class AppBanSets: Sendable {
    typealias Bans = [String: AppBanStanding]

    private struct State {
        /// Bumped by `clear`: what a read learned before it is not kept.
        var generation: UInt64 = 0
        var apps: [Int64: (version: UInt64, bans: Bans)] = [:]
    }

    private let state = Mutex(State())

    /// The current generation: a read takes it at its start and passes it with what it keeps.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// The app's bans at `version`: empty at version 0, nil when not kept.
    func bans(appID: Int64, version: UInt64) -> Bans? {
        if version == 0 { return [:] }
        return state.withLock { state in
            guard let kept = state.apps[appID], kept.version == version else { return nil }
            return kept.bans
        }
    }

    /// Keeps the app's bans read at `version`, unless a newer version is kept or the sets were
    /// cleared since the read began (`generation`).
    func keep(_ bans: Bans, appID: Int64, version: UInt64, generation: UInt64) {
        state.withLock { state in
            guard state.generation == generation else { return }
            if let kept = state.apps[appID], kept.version > version { return }
            state.apps[appID] = (version, bans)
        }
    }

    /// Forgets every set, and refuses what reads begun before learned: a connection broke, and
    /// the next may reach another server (whose versions need not mean what the kept ones did).
    func clear() {
        state.withLock { state in
            state.generation += 1
            state.apps.removeAll()
        }
    }
}
