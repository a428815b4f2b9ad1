import Moderation
import StoreTestSupport
import Synchronization
import TestSupport
import Testing

@testable import ModerationPostgres

/// The read cache (`ReadCache`, `CachedRead`): a call's read on one instance shows every write
/// acknowledged before the call arrived, through any instance, though the instance answered the
/// same read from memory before; one version check serves every read that arrived before it.
@Suite("PostgreSQL store: the read cache")
struct ReadCacheTests {
    /// A change made through one instance, and what a read through the other must then show.
    struct Change: CustomTestStringConvertible, Sendable {
        let name: String
        let make: @Sendable (_ owner: ModerationClient, _ guid: String) throws -> Void
        let read: @Sendable (_ owner: ModerationClient, _ guid: String) throws -> String
        let expected: String
        var testDescription: String { name }
    }

    static let listed: @Sendable (ModerationClient, String) throws -> String = { owner, guid in
        try owner.listMembers(guid).items.map { "\($0.uid):\($0.name):\($0.scope)" }.joined(separator: " ")
    }

    static let changes: [Change] = [
        Change(
            name: "a member joins", make: { owner, guid in _ = try owner.acting(as: "u2").join(guid) },
            read: listed, expected: "owner:User owner:admin u1:User u1:participant u2:User u2:participant"),
        Change(
            name: "a member's name changes",
            make: { owner, _ in
                let app = ModerationClient(service: owner.service, caller: Caller(app: owner.caller.app))
                _ = try app.updateUser(UserUpdate(uid: "u1", name: "Renamed"))
            },
            read: listed, expected: "owner:User owner:admin u1:Renamed:participant"),
        Change(
            name: "a member is kicked", make: { owner, guid in _ = try owner.kick(guid, "u1") },
            read: listed, expected: "owner:User owner:admin"),
        Change(
            name: "a member's scope changes",
            make: { owner, guid in _ = try owner.changeScope(guid, "u1", to: .moderator) },
            read: listed, expected: "owner:User owner:admin u1:User u1:moderator"),
        Change(
            name: "the group's description changes",
            make: { owner, guid in _ = try owner.updateGroup(GroupUpdate(guid: guid, description: "changed")) },
            read: { owner, guid in try owner.getGroup(guid).group.description }, expected: "changed"),
        Change(
            name: "the group is deleted", make: { owner, guid in _ = try owner.deleteGroup(guid) },
            read: { owner, guid in
                do throws(ModerationError) {
                    return try owner.getGroup(guid).group.guid
                } catch {
                    return error.code.name
                }
            }, expected: ErrorCode.groupNotFound.name),
        Change(
            name: "the reader leaves (its own membership, cached with the group)",
            make: { owner, guid in _ = try owner.acting(as: "u1").leave(guid) },
            read: { owner, guid in
                do throws(ModerationError) {
                    return try owner.acting(as: "u1").listMembers(guid).items.map(\.uid).joined(separator: " ")
                } catch {
                    return error.code.name
                }
            }, expected: ErrorCode.groupNotJoined.name),
    ]

    @Test(
        "after a write through one instance, the other's read shows it, though it had the old answer cached",
        arguments: changes)
    func readsSeeOtherInstancesWrites(_ change: Change) throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let clock = ManualWallClock()
        let writer = try Instance(url: schema.url, schema: schema.name, clock: clock)
        defer { writer.close() }
        let reader = try Instance(url: schema.url, schema: schema.name, clock: clock)
        defer { reader.close() }
        for uid in ["owner", "u1", "u2"] { _ = try writer.client().createUser(uid, name: "User \(uid)") }
        _ = try writer.client().createGroup("g", owner: "owner", members: [MemberGrant(uid: "u1")])
        // The second read "arrived" before the first's transaction checked the version, as the
        // reads of one burst do: it is answered from the cache.
        let arrived = monotonicNanoseconds()
        let before = try change.read(reader.client("owner"), "g")
        let again = try change.read(Self.arriving(at: arrived, reader.client("owner")), "g")
        #expect(again == before)
        let hits = reader.store.statistics.readCacheHits
        #expect(hits > 0, "the second read was answered from the cache")

        try change.make(writer.client("owner"), "g")
        #expect(try change.read(reader.client("owner"), "g") == change.expected)
        #expect(try change.read(writer.client("owner"), "g") == change.expected)
    }

    @Test("one version check serves the reads that arrived before it was sent; a later read sends its own")
    func checksAreShared() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let instance = try Instance(url: schema.url, schema: schema.name, clock: ManualWallClock())
        defer { instance.close() }
        _ = try instance.client().createUser("owner")
        _ = try instance.client().createGroup("g", owner: "owner")
        let owner = instance.client("owner")
        _ = try owner.getGroup("g") // the app's key and the group, cached
        let arrived = monotonicNanoseconds()
        let early = Self.arriving(at: arrived, owner)
        _ = try early.getGroup("g")
        let first = instance.store.statistics
        for _ in 0..<5 { _ = try early.getGroup("g") }
        let shared = instance.store.statistics
        #expect(shared.readCacheChecks == first.readCacheChecks, "no check for reads that arrived before the last")
        #expect(shared.readCacheSharedChecks == first.readCacheSharedChecks + 5)
        #expect(shared.readCacheHits >= first.readCacheHits + 5)
        _ = try owner.getGroup("g") // arrives now, after that check was sent
        #expect(instance.store.statistics.readCacheChecks == shared.readCacheChecks + 1)
    }

    @Test("a write committed during a read that already used the cache: the read runs again, at the new version")
    func conflictRunsTheReadAgain() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let clock = ManualWallClock()
        let reader = try Instance(url: schema.url, schema: schema.name, clock: clock)
        defer { reader.close() }
        let writer = try Instance(url: schema.url, schema: schema.name, clock: clock)
        defer { writer.close() }
        _ = try writer.client().createUser("owner")
        _ = try writer.client().createGroup("g", owner: "owner")
        // The read "arrived" before this one's check, so it may use the cache without a check.
        let arrived = monotonicNanoseconds()
        _ = try reader.client("owner").getGroup("g") // cached, and the app's version checked
        let runs = Mutex<[String]>([])
        let seen = try reader.store.read(arrivedAt: arrived) { (snapshot) throws(ModerationError) -> (String, Bool) in
            guard let appID = try snapshot.appID(named: "app"),
                let group = try snapshot.group(appID: appID, guid: "g")
            else { throw .storage("the group is missing") }
            let run = runs.withLock { runs in
                runs.append(group.group.description)
                return runs.count
            }
            if run == 1 {
                do {
                    _ = try writer.client("owner").updateGroup(GroupUpdate(guid: "g", description: "during"))
                } catch {
                    throw .storage("\(error)")
                }
            }
            // Not cached: the read's transaction starts here, after the write.
            let ban = try snapshot.ban(groupID: group.id, uid: "nobody")
            return (group.group.description, ban == nil)
        }
        #expect(runs.withLock { $0 } == ["", "during"], "the first run saw the cached group; the second the new one")
        #expect(seen.0 == "during" && seen.1)
    }

    @Test("a reader connection that breaks empties the cache: the next connection may reach another server")
    func brokenConnectionEmpties() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let name = "cache-\(schema.name)"
        let instance = try Instance(url: schema.url, schema: schema.name, clock: ManualWallClock()) {
            $0.applicationName = name
            $0.readers = 1
        }
        defer { instance.close() }
        _ = try instance.client().createUser("owner")
        _ = try instance.client().createGroup("g", owner: "owner")
        let arrived = monotonicNanoseconds()
        _ = try instance.client("owner").getGroup("g")
        let early = Self.arriving(at: arrived, instance.client("owner"))
        let warm = instance.store.statistics
        _ = try early.getGroup("g")
        #expect(instance.store.statistics.readCacheHits == warm.readCacheHits + 2, "warm: group and membership cached")
        _ = try schema.value(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '\(name)'")
        #expect(
            try waitUntil(timeoutMs: 5_000) {
                try schema.value("SELECT count(*) FROM pg_stat_activity WHERE application_name = '\(name)'") == "0"
            })
        let before = instance.store.statistics
        #expect(try instance.client("owner").getGroup("g").group.guid == "g", "read again on a new connection")
        #expect(instance.store.statistics.readCacheClears == before.readCacheClears + 1, "the cache was emptied")
        // A read that arrived before the break finds no check and no entry from before it: what it
        // is answered from was read on the new connection.
        let checked = instance.store.statistics
        _ = try early.getGroup("g")
        #expect(instance.store.statistics.readCacheChecks == checked.readCacheChecks, "the new connection's check")
    }

    @Test("a small cache that keeps emptying answers as an instance without one")
    func smallCacheAnswersAsNone() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let clock = ManualWallClock()
        let cached = try Instance(url: schema.url, schema: schema.name, clock: clock) { $0.readCacheEntries = 5 }
        defer { cached.close() }
        let plain = try Instance(url: schema.url, schema: schema.name, clock: clock) { $0.readCacheEntries = 0 }
        defer { plain.close() }
        for uid in (0..<6).map({ "u\($0)" }) { _ = try plain.client().createUser(uid) }
        let guids = (0..<4).map { "g\($0)" }
        for (index, guid) in guids.enumerated() {
            _ = try plain.client().createGroup(
                guid, owner: "u0", members: (1...index + 1).map { MemberGrant(uid: "u\($0)") })
        }
        for round in 0..<3 {
            // The round's reads arrive after the last round's write, all at once.
            let arrived = monotonicNanoseconds()
            for guid in guids {
                for actor in ["u0", "u1", "u5"] {
                    func answer(_ instance: Instance) -> String {
                        let client = Self.arriving(at: arrived, instance.client(actor))
                        do throws(ModerationError) {
                            let members = try client.listMembers(guid).items.map(\.uid)
                            let view = try client.getGroup(guid)
                            return "\(members) \(view.group.membersCount) \(view.scope.map { "\($0)" } ?? "-")"
                        } catch {
                            return error.code.name
                        }
                    }
                    #expect(answer(cached) == answer(plain), "round \(round), \(guid) as \(actor)")
                }
            }
            _ = try plain.client("u5").join(guids[round])
        }
        #expect(cached.store.statistics.readCacheHits > 0)
        #expect(plain.store.statistics.readCacheHits == 0 && plain.store.statistics.readCacheChecks == 0)
    }
}

extension ReadCacheTests {
    /// `client` for calls that arrived at `instant` (`Caller.receivedAt`).
    static func arriving(at instant: UInt64, _ client: ModerationClient) -> ModerationClient {
        var early = client
        early.caller.receivedAt = instant
        return early
    }
}

/// `ReadCache` alone: which version an entry is kept and found at, checks, clearing, capacity.
@Suite("ReadCache's rules")
struct ReadCacheRuleTests {
    static func group(_ id: Int64) -> StoredGroup {
        StoredGroup(
            id: id, revision: 1, group: Group(guid: "g\(id)", name: "G", type: .public, owner: "o"),
            passwordHash: nil)
    }

    static func member(_ uid: String) -> Member {
        Member(uid: uid, name: uid, avatar: "", scope: .participant, joinedAt: 0)
    }

    @Test("entries are found at the version they were kept at, and at no other")
    func versions() {
        let cache = ReadCache(capacity: 100)
        let generation = cache.generation
        cache.keep(group: Self.group(1), guid: "g1", appID: 7, version: 3, generation: generation)
        cache.keep(group: nil, guid: "none", appID: 7, version: 3, generation: generation)
        #expect(cache.group(appID: 7, guid: "g1", version: 3)??.id == 1)
        #expect(cache.group(appID: 7, guid: "none", version: 3) == .some(nil), "a group known not to exist")
        #expect(cache.group(appID: 7, guid: "g1", version: 4) == nil)
        #expect(cache.group(appID: 8, guid: "g1", version: 3) == nil, "another app")
        #expect(cache.appOf(groupID: 1) == 7)
        // An entry read at an older version than those kept is dropped; a newer one replaces them.
        cache.keep(membership: nil, groupID: 1, uid: "u", appID: 7, version: 2, generation: generation)
        #expect(cache.membership(appID: 7, groupID: 1, uid: "u", version: 2) == nil)
        cache.keep(memberPage: [Self.member("u")], groupID: 1, limit: 30, appID: 7, version: 5, generation: generation)
        #expect(cache.memberPage(appID: 7, groupID: 1, limit: 30, version: 5)?.map(\.uid) == ["u"])
        #expect(cache.memberPage(appID: 7, groupID: 1, limit: 20, version: 5) == nil, "another page size")
        #expect(cache.group(appID: 7, guid: "g1", version: 3) == nil, "version 3's entries made way")
    }

    @Test("a check counts for reads that arrived before it was sent; a newer version empties the app")
    func checks() {
        let cache = ReadCache(capacity: 100)
        let generation = cache.generation
        cache.keep(group: Self.group(1), guid: "g1", appID: 7, version: 3, generation: generation)
        cache.recordCheck(appID: 7, startedAt: 1_000, version: 3, generation: generation)
        #expect(cache.version(of: 7, checkedSince: 999) == 3)
        #expect(cache.version(of: 7, checkedSince: 1_000) == 3)
        #expect(cache.version(of: 7, checkedSince: 1_001) == nil, "arrived after the check was sent")
        #expect(cache.version(of: 8, checkedSince: 0) == nil)
        cache.recordCheck(appID: 7, startedAt: 900, version: 2, generation: generation)
        #expect(cache.version(of: 7, checkedSince: 950) == 3, "an older check does not replace a later one")
        cache.recordCheck(appID: 7, startedAt: 2_000, version: 4, generation: generation)
        #expect(cache.version(of: 7, checkedSince: 1_500) == 4)
        #expect(cache.group(appID: 7, guid: "g1", version: 3) == nil, "the app changed: its entries went")
    }

    @Test("clear forgets everything and refuses what reads begun before it learned")
    func clear() {
        let cache = ReadCache(capacity: 100)
        let before = cache.generation
        cache.remember(appID: 7, named: "app", generation: before)
        cache.keep(group: Self.group(1), guid: "g1", appID: 7, version: 3, generation: before)
        cache.recordCheck(appID: 7, startedAt: 1_000, version: 3, generation: before)
        cache.clear()
        #expect(cache.appID(named: "app") == nil && cache.appOf(groupID: 1) == nil)
        #expect(cache.group(appID: 7, guid: "g1", version: 3) == nil)
        #expect(cache.version(of: 7, checkedSince: 0) == nil)
        cache.keep(group: Self.group(1), guid: "g1", appID: 7, version: 3, generation: before)
        cache.recordCheck(appID: 7, startedAt: 2_000, version: 3, generation: before)
        cache.remember(appID: 7, named: "app", generation: before)
        #expect(cache.group(appID: 7, guid: "g1", version: 3) == nil, "kept by a read begun before the clear")
        #expect(cache.version(of: 7, checkedSince: 0) == nil && cache.appID(named: "app") == nil)
        cache.keep(group: Self.group(1), guid: "g1", appID: 7, version: 3, generation: cache.generation)
        #expect(cache.group(appID: 7, guid: "g1", version: 3)??.id == 1)
    }

    @Test(
        "at capacity the cache empties; a page weighs one more per member",
        arguments: [(3, [false, true]), (4, [true, true])])
    func capacity(_ capacity: Int, found expected: [Bool]) {
        let cache = ReadCache(capacity: capacity)
        let generation = cache.generation
        let page = [Self.member("a"), Self.member("b")]
        cache.keep(memberPage: page, groupID: 1, limit: 2, appID: 7, version: 1, generation: generation)
        // The page weighs 3 and the group 1: past a capacity of 3 everything went before the group came.
        cache.keep(group: Self.group(2), guid: "g2", appID: 7, version: 1, generation: generation)
        let found = [
            cache.memberPage(appID: 7, groupID: 1, limit: 2, version: 1) != nil,
            cache.group(appID: 7, guid: "g2", version: 1) != nil,
        ]
        #expect(found == expected)
        #expect(ReadCache(capacity: 0).isEnabled == false)
    }
}
