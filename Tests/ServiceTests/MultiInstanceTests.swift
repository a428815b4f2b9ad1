internal import Glibc
import ModerationMessages
import RPCCore
import RPCPosix
import StoreTestSupport
import Synchronization
import TestSupport
import Testing

extension EndToEnd {
    /// Three real `moderation-server --store postgres` processes on one schema, as a deployment
    /// behind a load balancer: random mutations through all three at once leave one gapless log
    /// whose replay is the state every instance reads, a subscriber on each instance sees that log
    /// action for action, and an instance killed with SIGKILL loses nothing it acknowledged while
    /// the others keep serving. On PostgreSQL only (SQLite's store is one process's).
    @Suite("Three server instances on one PostgreSQL schema", .onPostgreSQL)
    struct MultiInstanceTests {
        /// The durability test's users and groups, as its `check` expects them.
        static let users = KillRestartTests.users
        static let groups = KillRestartTests.groups

        @Test(
            "mutations through three instances: one gapless log, its replay the state on each, the same events on each")
        func threeInstances() throws {
            let trio = try Trio()
            defer { trio.tearDown() }
            try trio.seed()
            // Live subscribers, one per instance, whole app from the start of the log.
            let subscribers = try (0..<3).map { try trio.app($0) }
            let streams = subscribers.map { $0.subscribe(after: 0) }
            let loads = (0..<3).map { index in trio.load(index, seed: UInt64(index + 1) * 104_729) }
            for load in loads { load.start() }
            let loaded = waitUntil(timeoutMs: 30_000) { loads.allSatisfy { $0.acks.count >= 150 } }
            for load in loads { try load.stop() }
            #expect(loaded, "acknowledged: \(loads.map(\.acks.count))")
            let acknowledged = loads.flatMap(\.acks)
            let head = try subscribers[0].markHead(owner: Self.users[0])
            var reference: [Action]?
            for (index, stream) in streams.enumerated() {
                #expect(
                    stream.waitForSeq(head, timeoutMs: 15_000),
                    "instance \(index)'s subscriber reached \(stream.lastSeq) of \(head)")
                let seen = stream.actions.filter { $0.seq <= head }
                #expect(
                    seen.map(\.seq) == Array(1...head), "instance \(index): the events are 1…\(head), in order, once")
                if let reference {
                    #expect(seen == reference, "instance \(index) delivered other actions than instance 0")
                } else {
                    reference = seen
                }
                stream.cancel()
            }
            for index in 0..<3 {
                let report = try KillRestartTests.check(trio.app(index), acknowledged: acknowledged)
                print("three instances, read through instance \(index): \(report)")
            }
        }

        @Test(
            "an OK from one instance, then a read through another whose read cache holds the old answer: the read shows the write"
        )
        func readsSeeWritesAcknowledgedElsewhere() throws {
            let trio = try Trio()
            defer { trio.tearDown() }
            try trio.seed()
            let writer = try trio.app(0)
            defer { writer.connection.close() }
            let reader = try trio.app(1)
            defer { reader.connection.close() }
            let guid = Self.groups[0]
            let owner = reader.acting(as: Self.users[0])
            var joined: Set<String> = []
            for round in 0..<40 {
                // Twice, so that instance 1 answers the second from its cache.
                for _ in 0..<2 { _ = try owner.allMembers(guid) }
                let uid = Self.users[12 + round % 4]
                if joined.contains(uid) {
                    _ = try writer.acting(as: uid).leave(guid)
                    joined.remove(uid)
                } else {
                    _ = try writer.acting(as: uid).join(guid)
                    joined.insert(uid)
                }
                let shown = Set(try owner.allMembers(guid).map(\.uid)).subtracting(Self.users[0..<12])
                #expect(
                    shown == joined,
                    "round \(round): instance 1 shows \(shown.sorted()), acknowledged \(joined.sorted())")
                let count = try owner.getGroup(guid).membersCount
                #expect(count == UInt32(3 + joined.count), "round \(round): members_count \(count)")
            }
        }

        @Test("SIGKILL of one instance during a write burst: every acknowledged mutation is there, the others serve on")
        func killOne() throws {
            let trio = try Trio()
            defer { trio.tearDown() }
            try trio.seed()
            let loads = (0..<3).map { index in trio.load(index, seed: UInt64(index + 1) * 7_919) }
            for load in loads { load.start() }
            let loaded = waitUntil(timeoutMs: 30_000) { loads.allSatisfy { $0.acks.count >= 100 } }
            let status = try trio.servers[2].kill(SIGKILL)
            #expect(loaded, "acknowledged before the kill: \(loads.map(\.acks.count))")
            #expect(status & 0x7F == SIGKILL, "the server ended with wait status \(status), not by SIGKILL")
            #expect(waitUntil(timeoutMs: 15_000) { loads[2].isFinished }, "the killed instance's calls fail")
            // The two others go on acknowledging writes, the killed one's apps' locks released.
            let before = loads[0].acks.count + loads[1].acks.count
            let servedOn = waitUntil(timeoutMs: 20_000) { loads[0].acks.count + loads[1].acks.count >= before + 60 }
            for load in loads { try load.stop() }
            #expect(servedOn, "after the kill: \(loads[0].acks.count + loads[1].acks.count - before) more acknowledged")
            let acknowledged = loads.flatMap(\.acks)
            for index in 0..<2 {
                let report = try KillRestartTests.check(trio.app(index), acknowledged: acknowledged)
                print("after SIGKILL of instance 2, read through instance \(index): \(report)")
            }
        }
        @Test(
            "PostgreSQL restarted under load: UNAVAILABLE with ERR_STORE_UNAVAILABLE, recovery without restarting the instances, nothing acknowledged lost"
        )
        func databaseRestart() throws {
            // A cluster of its own: the test stops and starts it.
            let cluster = try PostgresCluster.start()
            defer { cluster.tearDown() }
            let trio = try Trio(url: cluster.url)
            defer { trio.tearDown() }
            try trio.seed()
            let subscribers = try (0..<3).map { try trio.app($0) }
            let streams = subscribers.map { $0.subscribe(after: 0) }
            let before = (0..<3).map { index in trio.load(index, seed: UInt64(index + 1) * 31) }
            for load in before { load.start() }
            let loaded = waitUntil(timeoutMs: 30_000) { before.allSatisfy { $0.acks.count >= 50 } }
            #expect(loaded, "acknowledged before the restart: \(before.map(\.acks.count))")

            try cluster.stop()
            // Each load thread ends at its first UNAVAILABLE; every instance answers fast and plainly.
            #expect(waitUntil(timeoutMs: 15_000) { before.allSatisfy(\.isFinished) }, "the calls fail")
            for load in before { try load.stop() }
            for load in before {
                let unexpected = load.failures.keys.filter { $0 == "ERR_INTERNAL" || $0 == "NOT_AN_RPC_ERROR" }
                #expect(unexpected.isEmpty, "failures during the outage: \(load.failures)")
                #expect(load.failures["ERR_STORE_UNAVAILABLE", default: 0] >= 1, "\(load.failures)")
            }
            for index in 0..<3 {
                let started = Clock.nowMs
                let error = ModerationWireClient.error { try subscribers[index].getGroup("k0") }
                #expect(
                    error?.code == .unavailable && error?.errorCode == "ERR_STORE_UNAVAILABLE",
                    "\(String(describing: error))")
                #expect(Clock.nowMs - started < 3_000, "instance \(index) took \(Clock.nowMs - started) ms to fail")
            }

            try cluster.restart()
            let after = (0..<3).map { index in trio.load(index, seed: UInt64(index + 1) * 37) }
            let recovered = waitUntil(timeoutMs: 20_000, pollMs: 100) {
                (0..<3).allSatisfy { (try? subscribers[$0].getGroup("k0")) != nil }
            }
            #expect(recovered, "every instance serves again without a restart")
            for load in after { load.start() }
            let reloaded = waitUntil(timeoutMs: 30_000) { after.allSatisfy { $0.acks.count >= 50 } }
            for load in after { try load.stop() }
            #expect(reloaded, "acknowledged after the restart: \(after.map(\.acks.count))")
            let acknowledged = (before + after).flatMap(\.acks)
            let head = try subscribers[0].markHead(owner: Self.users[0])
            // A subscriber either went on through the outage, or ended with the seq it reached and
            // resumes from there.
            for (index, stream) in streams.enumerated() {
                var seqs = stream.seqs
                print(
                    "instance \(index)'s subscriber through the restart: \(stream.hasEnded ? "ended at \(stream.lastSeq) (\(String(describing: stream.end)))" : "went on")"
                )
                if stream.hasEnded {
                    let resumed = subscribers[index].subscribe(after: stream.lastSeq)
                    #expect(
                        resumed.waitForSeq(head, timeoutMs: 15_000), "instance \(index) resumed to \(resumed.lastSeq)")
                    seqs += resumed.seqs
                    resumed.cancel()
                } else {
                    #expect(stream.waitForSeq(head, timeoutMs: 15_000), "instance \(index) reached \(stream.lastSeq)")
                    seqs = stream.seqs
                }
                stream.cancel()
                #expect(seqs.filter { $0 <= head } == Array(1...head), "instance \(index): 1…\(head) once each")
            }
            for index in 0..<3 {
                let report = try KillRestartTests.check(trio.app(index), acknowledged: acknowledged)
                print("after the PostgreSQL restart, read through instance \(index): \(report)")
            }
        }
    }

    /// Three server processes on a fresh schema of the suites' PostgreSQL database.
    final class Trio {
        let directory = TemporaryDirectory(prefix: "moderation-trio")
        let url: String
        let schema = PostgresCluster.uniqueSchema("trio")
        private(set) var servers: [ServerProcess] = []

        /// - Parameters:
        ///   - url: the database; nil for the one the test runs on (`TestBackend.current`).
        ///   - extraArguments: given to every instance besides the store's.
        init(url: String? = nil, extraArguments: [String] = []) throws {
            var suitesURL: String?
            if case .postgres(let current) = TestBackend.current { suitesURL = current }
            guard let url = url ?? suitesURL else {
                throw TestFailure("the instances need PostgreSQL (the suite runs `.onPostgreSQL`)")
            }
            self.url = url
            do {
                for index in 0..<3 {
                    let arguments =
                        [
                            "--data-dir", directory.path + "/data\(index)", "--api-key",
                            "\(TestApp.one.rawValue):\(TestApp.one.apiKey)", "--log-level", "warning", "--store",
                            "postgres", "--postgres-url", url, "--postgres-schema", schema,
                        ] + extraArguments
                    servers.append(
                        try ServerProcess(arguments: arguments, logPath: directory.path + "/server\(index).log"))
                }
            } catch {
                tearDown()
                throw error
            }
        }

        /// A new connection to instance `index`, as the app.
        func connect(_ index: Int) throws -> ClientConnection {
            var options = ClientOptions(port: servers[index].port, apiKey: TestApp.one.apiKey)
            options.clientName = "multi-instance-test"
            return try ClientConnection.connect(options)
        }

        /// The app on a new connection to instance `index`.
        func app(_ index: Int) throws -> ModerationWireClient {
            ModerationWireClient(connection: try connect(index), actor: "")
        }

        /// The users and the groups (an owner, an admin and a participant each), through instance 0.
        func seed() throws {
            let app = try app(0)
            defer { app.connection.close() }
            let users = EndToEnd.MultiInstanceTests.users
            for uid in users { try app.createUser(uid) }
            for (index, guid) in EndToEnd.MultiInstanceTests.groups.enumerated() {
                try app.createGroup(
                    guid, owner: users[index], members: [(users[index + 4], .admin), (users[index + 8], .participant)])
            }
        }

        /// Random mutations through instance `index` (two connections).
        func load(_ index: Int, seed: UInt64) -> WriteLoad {
            let port = servers[index].port
            return WriteLoad(
                threads: 2, groups: EndToEnd.MultiInstanceTests.groups, users: EndToEnd.MultiInstanceTests.users,
                seed: seed
            ) {
                var options = ClientOptions(port: port, apiKey: TestApp.one.apiKey)
                options.clientName = "multi-instance-load"
                return try ClientConnection.connect(options)
            }
        }

        /// Stops the servers (SIGKILL: their data is in PostgreSQL) and drops the schema.
        func tearDown() {
            for server in servers { _ = try? server.kill(SIGKILL) }
            servers.removeAll()
            PostgresCluster.dropSchema(schema, url: url)
            directory.remove()
        }
    }
}
