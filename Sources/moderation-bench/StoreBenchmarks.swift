internal import Glibc
import Moderation
import ModerationSQLite
import SeededRandom
internal import Synchronization
import ThreadSupport

/// The moderation service on its SQLite store, in process: durable mutation throughput from many
/// concurrent callers, read throughput, and list/search latency in a very large group.
///
/// Every store lives in a fresh directory under /tmp with `synchronous=FULL` (each commit is
/// fsynced before its mutations complete) and is deleted at exit.
enum StoreBenchmarks {
    /// The whole suite (`store`).
    static func all() -> [Benchmark] {
        mutations() + reads() + posting() + bigGroup()
    }

    /// Durable mutation throughput (`store.mutations`).
    static func mutations() -> [Benchmark] {
        print("setting up: 32 groups, 4 096 users…")
        return mutationBenchmarks()
    }

    /// Read throughput (`store.reads`).
    static func reads() -> [Benchmark] {
        print("setting up: 50 groups of 1 000 members…")
        return readBenchmarks()
    }

    /// The decision call against GetMemberState (`store.posting`).
    static func posting() -> [Benchmark] {
        print("setting up: 32 groups of 100 members, 5 muted in each, one frozen…")
        return postingBenchmarks()
    }

    /// Lists and searches in a group of 100 000 members and 100 000 bans (`store.big`).
    static func bigGroup() -> [Benchmark] {
        print("setting up: 200 000 users, one group with 100 000 members and 100 000 bans…")
        return bigGroupBenchmarks()
    }

    /// Removes the benchmark stores.
    static func cleanUp() {
        for fixture in fixtures.withLock({ $0 }) { fixture.close() }
    }

    private static let fixtures = Mutex<[Fixture]>([])

    // MARK: Mutations

    /// Caller threads × mutations in flight per thread, as many independent clients would have.
    private static func mutationBenchmarks() -> [Benchmark] {
        let fixture = Fixture(name: "mutations")
        let app = fixture.client(nil)
        let groups = 32
        let threads = 8
        let pairsPerThread = 512
        fixture.createUsers((0..<groups).map { "owner-\($0)" })
        fixture.createUsers((0..<threads * pairsPerThread).map { "user-\($0)" })
        for group in 0..<groups {
            fixture.wait {
                app.service.createGroup(
                    app.caller, NewGroup(guid: "g\(group)", name: "Group \(group)", owner: "owner-\(group)"),
                    replay: { _ in [] }, completion: $0)
            }
        }
        // Each thread cycles its own (group, user) pairs through join → kick → join → ban → unban,
        // round-robin: with fewer mutations in flight than pairs, a pair's previous mutation is
        // always complete when its next one is issued, so every mutation is expected to succeed.
        let steps = Mutex([Int](repeating: 0, count: threads))
        let failures = Atomic<Int>(0)
        func burst(window: Int, operations: Int) -> Int {
            let perThread = operations / threads
            let workers = (0..<threads).map { thread in
                WorkerThread(name: "bench-caller") {
                    let inFlight = BlockingSemaphore(value: UInt32(window))
                    var step = steps.withLock { $0[thread] }
                    for _ in 0..<perThread {
                        inFlight.wait()
                        let pair = step % pairsPerThread
                        let phase = (step / pairsPerThread) % 5
                        let index = thread * pairsPerThread + pair
                        let user = "user-\(index)"
                        let guid = "g\(index % groups)"
                        let owner = Caller(app: "bench", actor: "owner-\(index % groups)")
                        let done: @Sendable (Bool) -> Void = { ok in
                            if !ok { failures.wrappingAdd(1, ordering: .relaxed) }
                            inFlight.signal()
                        }
                        let service = fixture.service
                        switch phase {
                        case 0, 2:
                            service.joinGroup(Caller(app: "bench", actor: user), guid: guid, replay: { _ in [] }) {
                                done($0.succeeded)
                            }
                        case 1:
                            service.kickMember(owner, guid: guid, uid: user, replay: { _ in [] }) { done($0.succeeded) }
                        case 3:
                            service.banMember(owner, guid: guid, uid: user, reason: "bench", replay: { _ in [] }) {
                                done($0.succeeded)
                            }
                        default:
                            service.unbanMember(owner, guid: guid, uid: user, replay: { _ in [] }) {
                                done($0.succeeded)
                            }
                        }
                        step += 1
                    }
                    for _ in 0..<window { inFlight.wait() }
                    steps.withLock { $0[thread] = step }
                }
            }
            for worker in workers { worker.join() }
            return perThread * threads
        }
        let operations = 100_000
        return [64, 1024].map { inFlight in
            Benchmark(
                name: "mutation kick/ban/unban/join, fsync, \(inFlight) in flight", iterations: 1,
                operationsPerIteration: operations
            ) {
                let done = burst(window: inFlight / threads, operations: operations)
                let failed = failures.exchange(0, ordering: .relaxed)
                if failed > 0 { print("  warning: \(failed) mutations failed") }
                return done
            }
        }
    }

    // MARK: Reads

    private static func readBenchmarks() -> [Benchmark] {
        let fixture = Fixture(name: "reads")
        let app = fixture.client(nil)
        let groups = 50
        let members = 1000
        fixture.createUsers((0..<members).map { "reader-\($0)" })
        for group in 0..<groups {
            let guid = "r\(group)"
            fixture.wait {
                app.service.createGroup(
                    app.caller, NewGroup(guid: guid, name: "Readers \(group)", owner: "reader-0"), replay: { _ in [] },
                    completion: $0)
            }
            for start in stride(from: 1, to: members, by: 100) {
                let grants = (start..<min(start + 100, members)).map { MemberGrant(uid: "reader-\($0)") }
                fixture.wait {
                    app.service.addMembers(app.caller, guid: guid, members: grants, replay: { _ in [] }, completion: $0)
                }
            }
        }
        enum Mix: String {
            case alternating = "GetGroup + ListMembers(30) alternating"
            case getGroup = "GetGroup"
            case firstPage = "ListMembers(30) page 1"
            case secondPage = "ListMembers(30) page 2"
        }
        // A cursor to the second page of every group, as its members would get it.
        let secondPage = (0..<groups).map { group in
            (try? fixture.service.listMembers(
                Caller(app: "bench"), guid: "r\(group)", options: ListMembersOptions(limit: 30)
            ).nextCursor) ?? ""
        }
        let operations = 200_000
        let runs: [(Mix, Int)] = [
            (.alternating, 2), (.alternating, 4), (.getGroup, 2), (.firstPage, 2), (.secondPage, 2),
        ]
        return runs.map { mix, threads -> Benchmark in
            Benchmark(name: "\(mix.rawValue), \(threads) threads", iterations: 1, operationsPerIteration: operations) {
                let checksum = Atomic<Int>(0)
                let workers = (0..<threads).map { thread in
                    WorkerThread(name: "bench-reader") {
                        var random = SplitMix64(seed: UInt64(thread + 1))
                        var sum = 0
                        for index in 0..<operations / threads {
                            let group = Int(random.next() % UInt64(groups))
                            let guid = "r\(group)"
                            let caller = Caller(app: "bench", actor: "reader-\(Int(random.next() % UInt64(members)))")
                            let listing: Bool
                            switch mix {
                            case .alternating: listing = index & 1 == 1
                            case .getGroup: listing = false
                            case .firstPage, .secondPage: listing = true
                            }
                            if !listing {
                                sum &+=
                                    (try? fixture.service.getGroup(caller, guid: guid).group.membersCount == members
                                        ? 1 : 0) ?? 0
                            } else {
                                let options = ListMembersOptions(
                                    limit: 30, cursor: mix == .secondPage ? secondPage[group] : "")
                                sum &+=
                                    (try? fixture.service.listMembers(caller, guid: guid, options: options).items.count
                                        == 30 ? 1 : 0) ?? 0
                            }
                        }
                        checksum.wrappingAdd(sum, ordering: .relaxed)
                    }
                }
                for worker in workers { worker.join() }
                if checksum.load(ordering: .relaxed) != operations / threads * threads {
                    print("  warning: some reads failed")
                }
                return checksum.load(ordering: .relaxed)
            }
        }
    }

    // MARK: Posting

    /// The app asking about one user in one group, one thread: GetMemberState, and CheckPost with
    /// one pair and with 100 (reported per pair): the service and the store without the wire, on
    /// the data of the wire benchmark's CheckPost suite (`WireBenchmark+CheckPost.swift`).
    private static func postingBenchmarks() -> [Benchmark] {
        let fixture = Fixture(name: "posting")
        let owner = fixture.client("owner")
        let groups = 32
        let members = 100
        fixture.createUsers(["owner"] + (0..<groups).flatMap { g in (0..<members).map { "r\(g)-u\($0)" } })
        for g in 0..<groups {
            let guid = "r\(g)"
            let grants = (0..<members).map { MemberGrant(uid: "r\(g)-u\($0)") }
            fixture.wait {
                owner.service.createGroup(
                    owner.caller, NewGroup(guid: guid, name: "Readers \(g)", members: grants), replay: { _ in [] },
                    completion: $0)
            }
            fixture.wait {
                owner.service.bulkMuteMembers(
                    owner.caller, guid: guid, uids: (0..<5).map { "r\(g)-u\($0 * 20)" }, reason: "bench",
                    replay: { _ in [] }, completion: $0)
            }
        }
        fixture.wait {
            owner.service.freezeGroup(owner.caller, guid: "r31", reason: "bench", replay: { _ in [] }, completion: $0)
        }
        let app = Caller(app: "bench")
        let pairs = (0..<3200).map { index in
            PostCheck(guid: "r\(index % groups)", uid: "r\(index % groups)-u\((index / groups) % members)")
        }
        let batches = (0..<32).map { body in (0..<100).map { i in pairs[(body * 100 + i * 33) % pairs.count] } }
        var next = 0
        return [
            Benchmark(name: "GetMemberState (the app, one user)", iterations: 50_000) {
                next = (next + 1) % pairs.count
                let pair = pairs[next]
                return (try? fixture.service.getMemberState(app, guid: pair.guid, uid: pair.uid).isMember ? 1 : 0) ?? 0
            },
            Benchmark(name: "CheckPost, 1 pair", iterations: 50_000) {
                next = (next + 1) % pairs.count
                return (try? fixture.service.checkPost(app, checks: [pairs[next]])[0].allowed ? 1 : 0) ?? 0
            },
            Benchmark(name: "CheckPost, 100 pairs (per pair)", iterations: 1_000, operationsPerIteration: 100) {
                next = (next + 1) % batches.count
                return (try? fixture.service.checkPost(app, checks: batches[next]).filter(\.allowed).count) ?? 0
            },
        ]
    }

    // MARK: A very large group

    private static func bigGroupBenchmarks() -> [Benchmark] {
        let fixture = Fixture(name: "big")
        let app = fixture.client(nil)
        let count = 100_000
        fixture.createUsers((0..<count).map { "m-\($0)" }, name: { "Member Person \($0.dropFirst(2))" })
        fixture.createUsers((0..<count).map { "b-\($0)" }, name: { "Banned Person \($0.dropFirst(2))" })
        fixture.wait {
            app.service.createGroup(
                app.caller, NewGroup(guid: "big", name: "Big", owner: "m-0"), replay: { _ in [] }, completion: $0)
        }
        fixture.pipeline(Array(stride(from: 1, to: count, by: 100))) { start, completion in
            let grants = (start..<min(start + 100, count)).map { MemberGrant(uid: "m-\($0)") }
            app.service.addMembers(app.caller, guid: "big", members: grants, replay: { _ in [] }) {
                completion($0.succeeded)
            }
        }
        fixture.pipeline(Array(stride(from: 0, to: count, by: 100))) { start, completion in
            let uids = (start..<min(start + 100, count)).map { "b-\($0)" }
            app.service.bulkBanMembers(app.caller, guid: "big", uids: uids, reason: "bench", replay: { _ in [] }) {
                completion($0.succeeded)
            }
        }
        let caller = Caller(app: "bench")
        let service = fixture.service
        func members(_ search: String) -> Int {
            (try? service.listMembers(caller, guid: "big", options: ListMembersOptions(limit: 30, search: search)).items
                .count) ?? -1
        }
        let memberPage2 =
            (try? service.listMembers(caller, guid: "big", options: ListMembersOptions(limit: 30)).nextCursor) ?? ""
        let banPage2 =
            (try? service.listBannedMembers(caller, guid: "big", options: ListBannedOptions(limit: 30)).nextCursor)
            ?? ""
        func bans(_ search: String) -> Int {
            (try? service.listBannedMembers(caller, guid: "big", options: ListBannedOptions(limit: 30, search: search))
                .items.count) ?? -1
        }
        return [
            Benchmark(name: "100k members + 100k bans: ListBannedMembers page 1", iterations: 2000) { bans("") },
            Benchmark(name: "100k members + 100k bans: ListBannedMembers page 2", iterations: 2000) {
                (try? service.listBannedMembers(
                    caller, guid: "big", options: ListBannedOptions(limit: 30, cursor: banPage2)
                ).items.count) ?? -1
            },
            Benchmark(name: "100k members + 100k bans: ListMembers page 1 (cached)", iterations: 2000) { members("") },
            Benchmark(name: "100k members + 100k bans: ListMembers page 2", iterations: 2000) {
                (try? service.listMembers(
                    caller, guid: "big", options: ListMembersOptions(limit: 30, cursor: memberPage2)
                ).items.count) ?? -1
            },
            Benchmark(name: "100k: banned search by name (1 match)", iterations: 2000) { bans("banned person 77777") },
            Benchmark(name: "100k: member search by name (1 match)", iterations: 2000) {
                members("member person 54321")
            },
            Benchmark(name: "100k: member search, common word (scan)", iterations: 2000) { members("person") },
            Benchmark(name: "100k: member search, 2 characters (scan)", iterations: 2000) { members("77") },
            Benchmark(name: "100k: GetGroup", iterations: 20000) {
                (try? service.getGroup(Caller(app: "bench", actor: "m-5"), guid: "big").group.membersCount) ?? -1
            },
        ]
    }

    // MARK: Fixture

    /// A service on a fresh store.
    final class Fixture: Sendable {
        let directory: String
        let store: SQLiteStore
        let service: ModerationService

        init(name: String) {
            var template = Array("/tmp/moderation-bench-\(name)-XXXXXX".utf8CString)
            directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
            store = try! SQLiteStore(options: SQLiteStoreOptions(directory: directory, durability: .full))
            service = ModerationService(store: store)
            fixtures.withLock { $0.append(self) }
        }

        func client(_ actor: String?) -> (service: ModerationService, caller: Caller) {
            (service, Caller(app: "bench", actor: actor))
        }

        func wait<T: Sendable>(_ start: (@escaping @Sendable (MutationResult<T>) -> Void) -> Void) {
            let done = BlockingSemaphore()
            start { result in
                if !result.succeeded { print("  setup failure: \(result)") }
                done.signal()
            }
            done.wait()
        }

        /// Runs `issue` for every element with up to 512 in flight.
        func pipeline<Element>(_ elements: [Element], _ issue: (Element, @escaping @Sendable (Bool) -> Void) -> Void) {
            let inFlight = BlockingSemaphore(value: 512)
            let failures = Atomic<Int>(0)
            for element in elements {
                inFlight.wait()
                issue(element) { ok in
                    if !ok { failures.wrappingAdd(1, ordering: .relaxed) }
                    inFlight.signal()
                }
            }
            for _ in 0..<512 { inFlight.wait() }
            if failures.load(ordering: .relaxed) > 0 { print("  setup: \(failures.load(ordering: .relaxed)) failures") }
        }

        func createUsers(_ uids: [String], name: (String) -> String = { "User \($0)" }) {
            let caller = Caller(app: "bench")
            pipeline(uids) { uid, completion in
                service.createUser(caller, NewUser(uid: uid, name: name(uid)), replay: { _ in [] }) {
                    completion($0.succeeded)
                }
            }
        }

        func close() {
            service.shutdown()
            store.close()
            var paths = [
                directory + "/moderation.sqlite3-wal", directory + "/moderation.sqlite3-shm",
                directory + "/moderation.sqlite3",
            ]
            paths.removeAll { unlink($0) == 0 }
            rmdir(directory)
        }
    }
}

extension MutationResult {
    var succeeded: Bool {
        if case .done(.success, _) = self { return true }
        return false
    }
}
