internal import Moderation
internal import ModerationStoreSupport
internal import Synchronization

/// What CheckPost read of one user in one group, kept for the group's version: the store's
/// readers share it, so a pair asked about again is answered from memory.
///
/// Exact, not a guess: every change to a group's memberships, mutes and bans bumps the group's
/// `version` in the same transaction, so what a pair's rows say is a function of (group id,
/// version), and group ids are never reused. A reader uses an entry only when its version is the
/// one the reader's own snapshot shows for the group; an entry is replaced only by one of the
/// same or a newer version. Expiries are kept as times and judged by the caller at its own `now`.
final class PostingCache: Sendable {
    typealias Key = GroupUserKey

    struct Entry {
        let version: UInt64
        let membership: PostingMembership?
        /// For a non-member: the ban row's expiry (0: permanent), or nil when there is none.
        let banExpiresAt: Int64?
    }

    private final class Shard: Sendable {
        let entries = Mutex<[Key: Entry]>([:])
    }

    private let shards: [Shard]
    private let perShard: Int

    /// - Parameter capacity: entries kept at most; 0 turns the cache off.
    init(capacity: Int) {
        shards = capacity > 0 ? (0..<16).map { _ in Shard() } : []
        perShard = max(1, capacity / 16)
    }

    /// The entry of `key` at `version`, if one is kept.
    func entry(_ key: Key, version: UInt64) -> Entry? {
        guard !shards.isEmpty else { return nil }
        return shard(key).entries.withLock { entries in
            guard let entry = entries[key], entry.version == version else { return nil }
            return entry
        }
    }

    func store(_ entry: Entry, for key: Key) {
        guard !shards.isEmpty else { return }
        shard(key).entries.withLock { entries in
            if let current = entries[key], current.version > entry.version { return }
            if entries.count >= perShard && entries[key] == nil { entries.removeAll(keepingCapacity: true) }
            entries[key] = entry
        }
    }

    private func shard(_ key: Key) -> Shard {
        shards[Int(UInt64(bitPattern: key.groupID) % UInt64(shards.count))]
    }
}
