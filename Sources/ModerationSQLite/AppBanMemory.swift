internal import Moderation
internal import Synchronization

/// Every app's bans from the app as the per-call check needs them (`AppBanStanding`), in memory:
/// loaded when the store opens, and changed only by the writer, after each commit that changed
/// them (`publish`).
///
/// Every call on behalf of a user asks it, so asking must cost next to nothing: each session
/// keeps its own copy of the whole table (`Copy`: a dictionary, shared copy-on-write, with the
/// generation it was taken at) and takes it again only when a commit has changed the table
/// since. The common case — the writer has published nothing new — is one atomic load, and for
/// an app that has banned nobody an empty lookup.
///
/// Never older than a read's snapshot: the writer publishes a commit's changes before it
/// announces the commit to readers (`WriterLoop.run` counts the commit after `commitWrite`), so a
/// read that began after a commit sees its bans. A read may also see a ban committed while it
/// runs, which its snapshot does not show: the ban applies from its commit on.
final class AppBanMemory: Sendable {
    typealias Table = [Int64: [String: AppBanStanding]]

    /// A session's copy of the table and the generation it was taken at.
    struct Copy {
        fileprivate var generation = UInt64.max
        fileprivate var bans: Table = [:]

        init() {}
    }

    /// The table and its generation, bumped by every publication.
    private let table: Mutex<(generation: UInt64, bans: Table)>
    /// The table's generation, for readers to compare with their copy's without the lock.
    private let generation = Atomic<UInt64>(0)

    init(_ bans: Table) {
        table = Mutex((0, bans.filter { !$0.value.isEmpty }))
    }

    /// The standing of `uid`'s ban from the app `appID` (nil: none), from `copy`, which is taken
    /// again first when a commit has changed the table since.
    func standing(appID: Int64, uid: String, copy: inout Copy) -> AppBanStanding? {
        if generation.load(ordering: .acquiring) != copy.generation {
            copy = table.withLock { table in
                var fresh = Copy()
                fresh.generation = table.generation
                fresh.bans = table.bans
                return fresh
            }
        }
        guard !copy.bans.isEmpty, let banned = copy.bans[appID] else { return nil }
        return banned[uid]
    }

    /// Applies what one commit changed (`.some(nil)`: the ban was deleted).
    func publish(_ changes: [AppBanKey: AppBanStanding?]) {
        guard !changes.isEmpty else { return }
        table.withLock { table in
            for (key, standing) in changes {
                var banned = table.bans[key.appID] ?? [:]
                banned[key.uid] = standing
                table.bans[key.appID] = banned.isEmpty ? nil : banned
            }
            table.generation += 1
            generation.store(table.generation, ordering: .releasing)
        }
    }
}

/// A user of an app, by uid: the key of a ban from the app.
struct AppBanKey: Hashable {
    let appID: Int64
    let uid: String
}
