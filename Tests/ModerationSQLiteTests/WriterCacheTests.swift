import Moderation
import ModerationStoreSupport
import Testing

/// The writer's cache forgets what cannot be asked for again.
@Suite("Writer cache")
struct WriterCacheTests {
    static func group(_ id: Int64) -> StoredGroup {
        StoredGroup(
            id: id, revision: 1, group: Group(guid: "g\(id)", name: "g", type: .public, owner: "o"), passwordHash: nil)
    }

    @Test("A deleted group leaves nothing behind; rolling the deletion back restores it")
    func deletedGroupsAreForgotten() {
        let cache = WriterCache()
        for id in 1...1_000 as ClosedRange<Int64> {
            let key = WriterCache.GroupKey(appID: 1, guid: "g\(id)")
            cache.set(key, Self.group(id))
            cache.set(key, nil)
            cache.committed()
        }
        #expect(cache.appOfGroup.isEmpty)
        let key = WriterCache.GroupKey(appID: 1, guid: "kept")
        cache.set(key, Self.group(5_000))
        cache.committed()
        let mark = cache.mark
        cache.set(key, nil)
        cache.rollback(to: mark)
        #expect(cache.key(ofGroup: 5_000, guid: "kept") == key)
    }
}
