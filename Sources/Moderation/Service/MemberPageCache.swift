internal import Synchronization

/// The first page of each group's member list (no cursor, no filters), per page size, kept for
/// the group's latest version.
///
/// The page a member list shows is fixed by the group's membership — which every change bumps
/// the group's `version` for — and by its members' profiles, which only `UpdateUser` changes:
/// that bumps `profileEpoch` once committed, before its caller hears of it. A read takes the
/// epoch before its snapshot and the version from it, so a page cached under (version, epoch)
/// is exactly what the read would compute, or newer committed data. Groups are keyed by their
/// store id, which is never reused, so a deleted group's page can never be served again.
final class MemberPageCache: Sendable {
    struct Key: Hashable, Sendable {
        let groupID: Int64
        let limit: Int
    }

    struct Entry: Sendable {
        let version: UInt64
        let epoch: UInt64
        let page: Page<Member>
    }

    private final class Shard: Sendable {
        let entries = Mutex<[Key: Entry]>([:])
    }

    private let shards: [Shard]
    private let perShard: Int
    private let epoch = Atomic<UInt64>(0)

    /// - Parameter capacity: pages kept at most; 0 turns the cache off.
    init(capacity: Int) {
        let count = capacity > 0 ? 16 : 0
        shards = (0..<count).map { _ in Shard() }
        perShard = max(1, capacity / 16)
    }

    var isEnabled: Bool { !shards.isEmpty }

    /// The profile epoch; read it before taking the snapshot the page comes from.
    var profileEpoch: UInt64 { epoch.load(ordering: .acquiring) }

    /// A profile changed: no cached page may show the old one any more.
    func profilesChanged() {
        epoch.wrappingAdd(1, ordering: .acquiringAndReleasing)
    }

    func page(groupID: Int64, version: UInt64, epoch: UInt64, limit: Int) -> Page<Member>? {
        guard isEnabled else { return nil }
        return shard(groupID).entries.withLock { entries in
            guard let entry = entries[Key(groupID: groupID, limit: limit)], entry.version == version,
                entry.epoch == epoch
            else { return nil }
            return entry.page
        }
    }

    func store(_ page: Page<Member>, groupID: Int64, version: UInt64, epoch: UInt64, limit: Int) {
        guard isEnabled else { return }
        let key = Key(groupID: groupID, limit: limit)
        let entry = Entry(version: version, epoch: epoch, page: page)
        shard(groupID).entries.withLock { entries in
            if let current = entries[key],
                current.version > version || (current.version == version && current.epoch > epoch)
            {
                return
            }
            if entries.count >= perShard && entries[key] == nil { entries.removeAll(keepingCapacity: true) }
            entries[key] = entry
        }
    }

    private func shard(_ groupID: Int64) -> Shard {
        shards[Int(UInt64(bitPattern: groupID) % UInt64(shards.count))]
    }
}
