internal import CSystemShims
import CommandLineSupport
import Dispatch
internal import Glibc
import LoadGeneration
import ModerationMessages
import ProtoBridge
import RPCCore
import RPCPosix
import Synchronization

/// `moderation-bench wire`: the moderation service over real sockets, against a release
/// `moderation-server` child process (fsync on: `--durability full`).
///
/// - mutations: 16 connections × 8 calls in flight; each call slot cycles its own (group, user)
///   pair through JoinGroup → KickMember → JoinGroup → BanMember → UnbanMember, so every call
///   is expected to succeed and each records one durable action.
/// - reads: 16 × 8 in flight, GetGroup and ListMembers(limit 30) alternating, as random members.
/// - big group: one group with 100 000 members and 100 000 bans; single-call latency of the
///   first page of ListBannedMembers and of a search by name (one match).
/// - checkpost: CheckPost against GetMemberState, and CheckPost with 100 pairs a call against one
///   pair a call, in the same run (`WireBenchmark+CheckPost.swift`).
/// - content (with `--rules FILE`, from `content-bench --write-rules`): CheckPost with a text per
///   pair against the same batches without, and its latency while the app's rule set recompiles
///   (`WireBenchmark+ContentRules.swift`).
///
/// With `--pin` the servers run on CPU 0 and this process (its load generators) on CPU 1, as
/// the `echo` suite runs: the calls/s then measure the server, not the two sharing the cores.
/// The CheckPost suite is run so (`tools/bench wire`), since its targets compare two methods'
/// throughput, which a client on the same cores caps alike.
///
/// With `--postgres-url` the servers keep their data in that PostgreSQL database
/// (`--store postgres`), each server set in a schema of its own (`bench_<pid>_…`, dropped when the
/// run ends: `BenchSchemas`), so a run never meets an earlier run's data; `--instances N` spreads the mutations' connections round-robin
/// over N servers on the same schema (the setup and the reads use the first). `--apps N` spreads
/// them over N apps, each with the same groups and users: one app's writes all take its lock
/// (gapless seqs), different apps' writes commit side by side. With `--route-by-app`, every
/// connection of an app goes to the same instance (app i to instance i mod N), as a load
/// balancer routing by API key would, so no two instances take turns at one app's lock.
/// With `--keyed` every mutation carries an idempotency key of its own, as a client that retries
/// safely sends one: the store then looks each key up and stores each reply.
/// `--snapshot-command CMD` runs
/// `CMD before PHASE` and `CMD after PHASE` around each measured phase (`mutations`, `reads`),
/// for figures the benchmark cannot see, such as the database's own CPU and WAL counters
/// (`bench/postgres.py` uses it).
enum WireBenchmark {
    static func run(arguments: [String]) -> Int32 {
        var seconds = 5.0
        var connections = 16
        var depth = 8
        var bigMembers = 100_000
        var executable = ".build/release/moderation-server"
        var suites: Set<String> = ["mutations", "reads", "big", "checkpost"]
        var rounds = 3
        var rulesFile: String?
        var postgresURL: String?
        var postgresWriters: Int?
        var instances = 1
        var apps = 1
        var routeByApp = false
        var keyed = false
        var snapshotCommand: String?
        var pin = false
        let flagsRead = SuiteFlags.read(arguments, suite: "wire") { flag, reader throws(ArgumentError) in
            switch flag.name {
            case "--seconds": seconds = try SuiteFlags.seconds(reader.value(for: flag))
            case "--conns": connections = try reader.value(for: flag).integer(in: 1...10_000)
            case "--depth": depth = try reader.value(for: flag).integer(in: 1...10_000)
            case "--big-members": bigMembers = try reader.value(for: flag).integer(in: 1...10_000_000)
            case "--server": executable = try reader.value(for: flag).text
            case "--rules": rulesFile = try reader.value(for: flag, placeholder: "FILE").text
            case "--postgres-url": postgresURL = try reader.value(for: flag, placeholder: "URL").text
            case "--postgres-writers": postgresWriters = try reader.value(for: flag).integer(in: 1...64)
            case "--instances": instances = try reader.value(for: flag).integer(in: 1...16)
            case "--apps": apps = try reader.value(for: flag).integer(in: 1...64)
            case "--route-by-app": routeByApp = true
            case "--keyed": keyed = true
            case "--pin": pin = true
            case "--snapshot-command": snapshotCommand = try reader.value(for: flag, placeholder: "CMD").text
            case "--rounds": rounds = try reader.value(for: flag).integer(in: 1...100)
            case "--only":
                let value = try reader.value(for: flag)
                let known = ["mutations", "reads", "big", "checkpost", "content", "webhooks"].map { ($0, $0) }
                suites = []
                for name in value.text.split(separator: ",") {
                    suites.insert(try ArgumentValue(String(name), name: flag.name).choice(known))
                }
            default: return false
            }
            return true
        }
        guard flagsRead else { return 2 }
        if suites.contains("content") && rulesFile == nil {
            print("wire: --only content needs --rules FILE (content-bench --write-rules FILE)")
            return 2
        }
        if postgresURL == nil && (instances > 1 || postgresWriters != nil) {
            print("wire: --instances and --postgres-writers need --postgres-url")
            return 2
        }
        /// The store arguments of a server set: SQLite in its own data directory, or PostgreSQL in
        /// a schema named after this process and `set`.
        let schemas = postgresURL.map(BenchSchemas.init)
        defer { schemas?.drop(["w", "big"]) }
        func storeArguments(_ set: String) -> [String] {
            guard let postgresURL, let schemas else { return [] }
            return ["--store", "postgres", "--postgres-url", postgresURL, "--postgres-schema", schemas.name(set)]
                + (postgresWriters.map { ["--postgres-writers", String($0)] } ?? [])
        }
        let snapshot = Snapshot(command: snapshotCommand)
        let serverCPU: Int? = pin ? 0 : nil
        if pin {
            guard cshim_usable_cpu_count() >= 2, cshim_pin_thread(1) == 0 else {
                print("wire: --pin needs CPUs 0 and 1")
                return 2
            }
        }
        do throws(BenchError) {
            let readers = suites.contains("reads") || suites.contains("checkpost") || suites.contains("content")
            if suites.contains("mutations") || readers || suites.contains("webhooks") {
                var servers = [
                    try ServerProcess(
                        executable: executable, apps: apps, cpu: serverCPU,
                        extraArguments: storeArguments("w")
                            + (suites.contains("webhooks") ? ["--webhook-allow-private"] : []))
                ]
                defer { for server in servers { server.stop() } }
                let slotUsers = (connections * depth + 31) / 32
                for app in 0..<apps {
                    // Without the reads, only the users the mutation slots need (a faster setup).
                    let setup = try connect(servers[0].port, app: app)
                    try createGroups(
                        setup, groups: 32, usersPerGroup: readers ? max(100, slotUsers) : slotUsers, readers: readers)
                    setup.close()
                }
                if suites.contains("mutations") {
                    for _ in 1..<instances {
                        servers.append(
                            try ServerProcess(
                                executable: executable, apps: apps, cpu: serverCPU, extraArguments: storeArguments("w"))
                        )
                    }
                    try mutations(
                        servers: servers, apps: apps, routeByApp: routeByApp, postgres: postgresURL != nil,
                        keyed: keyed, connections: connections, depth: depth, seconds: seconds, snapshot: snapshot)
                }
                if suites.contains("reads") {
                    try reads(
                        server: servers[0], connections: connections, depth: depth, seconds: seconds, snapshot: snapshot
                    )
                }
                if suites.contains("checkpost") {
                    try checkPost(
                        server: servers[0], connections: connections, depth: depth, seconds: seconds, rounds: rounds,
                        snapshot: snapshot)
                }
                if suites.contains("webhooks") {
                    try webhooks(
                        server: servers[0], connections: connections, depth: depth, seconds: seconds, rounds: rounds,
                        snapshot: snapshot)
                }
                if suites.contains("content"), let rulesFile {
                    try contentRules(
                        server: servers[0], rulesFile: rulesFile, connections: connections, depth: depth,
                        seconds: seconds, rounds: rounds, pinned: pin, snapshot: snapshot)
                }
            }
            if suites.contains("big") {
                let server = try ServerProcess(
                    executable: executable, cpu: serverCPU, extraArguments: storeArguments("big"))
                defer { server.stop() }
                try bigGroup(server: server, members: bigMembers)
            }
            return 0
        } catch {
            print("wire: \(error)")
            return 1
        }
    }

    // MARK: Suites

    private static func mutations(
        servers: [ServerProcess], apps: Int, routeByApp: Bool, postgres: Bool, keyed: Bool, connections: Int,
        depth: Int, seconds: Double, snapshot: Snapshot
    ) throws(BenchError) {
        let slots = connections * depth
        let counter = Atomic<Int>(0)
        let failures = Mutex<[String]>([])
        /// A metric summed over the servers.
        func metric(_ name: String) -> Double { servers.reduce(0) { $0 + ($1.metric(name) ?? 0) } }
        let storeMetrics =
            postgres
            ? [
                "moderation_store_commits_total", "moderation_store_commit_batch_size_sum",
                "moderation_store_commit_seconds_sum", "moderation_store_commit_seconds_count",
                "moderation_store_deferred_writes_total", "moderation_store_retried_batches_total",
                "moderation_store_app_lock_wait_seconds_total", "moderation_store_writes_joined_while_locking_total",
                "moderation_store_read_ahead_seconds_total",
            ]
            : [
                "moderation_store_commits_total", "moderation_store_commit_batch_size_sum",
                "moderation_store_fsync_seconds_count", "moderation_store_fsync_seconds_sum",
            ]
        let metricsBefore = storeMetrics.map(metric)
        snapshot.take("before", "mutations")
        let cpuBefore = servers.reduce(0) { $0 + $1.cpuSeconds }
        let ports = servers.map(\.port)
        let elapsed = try drive(
            ports: ports, apps: apps, routeByApp: routeByApp, connections: connections, depth: depth, seconds: seconds
        ) {
            slot, step, connection, done in
            // With --keyed every call carries a key of its own, as a client that retries safely sends.
            issueMutation(slot: slot, step: step, connection, key: keyed ? "s\(slot)-\(step)" : "") { error in
                if let error { failures.withLock { if $0.count < 5 { $0.append(error.description) } } }
                counter.add(1, ordering: .relaxed)
                done()
            }
        }
        let count = counter.load(ordering: .relaxed)
        let cpu = servers.reduce(0) { $0 + $1.cpuSeconds } - cpuBefore
        snapshot.take("after", "mutations")
        let delta = zip(storeMetrics.map(metric), metricsBefore).map { $0 - $1 }
        let place =
            (postgres ? " on PostgreSQL" : "") + (servers.count > 1 ? ", spread over \(servers.count) instances" : "")
            + (apps > 1 ? ", \(apps) apps" : "") + (routeByApp && servers.count > 1 ? " routed by app" : "")
        print(
            "durable mutations (Join/Kick/Join/Ban/Unban), \(connections) connections × \(depth) in flight (\(slots) slots)\(place)\(keyed ? ", each with an idempotency key" : ""):"
        )
        print(
            "  \(Int(Double(count) / elapsed)) mutations/s over \(fixed(elapsed)) s; server CPU \(fixed(cpu / elapsed * 100))% of one core, \(fixed(cpu / Double(count) * 1e6)) µs per mutation"
        )
        let commits = max(delta[0], 1)
        if postgres {
            print(
                "  \(Int(delta[0])) commits, \(fixed(delta[1] / commits)) writes per commit; COMMIT \(fixed(delta[2] / max(delta[3], 1) * 1000)) ms each on average (WAL flush included); \(Int(delta[4])) writes deferred, \(Int(delta[5])) batches retried; app lock waited \(fixed(delta[6] / commits * 1000)) ms a commit, \(Int(delta[7])) writes joined while waiting; read ahead \(fixed(delta[8] / commits * 1000)) ms a commit"
            )
        } else {
            print(
                "  \(Int(delta[0])) commits, \(fixed(delta[1] / commits)) writes per commit; \(Int(delta[2])) fsyncs, \(fixed(delta[3] / max(delta[2], 1) * 1000)) ms each on average"
            )
        }
        let errors = failures.withLock { $0 }
        if !errors.isEmpty { print("  failures (first \(errors.count)): \(errors.joined(separator: "; "))") }
    }

    /// Reads are driven by `LoadGenerator` (the engine of `rpc-probe bench`): its calls are
    /// pre-encoded, so the client costs less CPU per call than the server and the figure is the
    /// server's. Two generators run at once, each on half the connections: one calls GetGroup,
    /// the other ListMembers(limit 30), both round-robin over the 32 groups, as their owner.
    private static func reads(
        server: ServerProcess, connections: Int, depth: Int, seconds: Double, snapshot: Snapshot
    ) throws(BenchError) {
        func configuration(_ path: String, _ bodies: [[UInt8]]) -> LoadConfiguration {
            var configuration = LoadConfiguration()
            configuration.client = ClientOptions(port: server.port, apiKey: ServerProcess.apiKey)
            configuration.path = path
            configuration.bodies = bodies
            configuration.callOptions = CallOptions(onBehalfOf: "owner")
            configuration.connections = max(1, connections / 2)
            configuration.depth = depth
            configuration.durationSeconds = seconds
            configuration.warmupSeconds = 0.5
            return configuration
        }
        let getGroup = configuration(
            ModerationMethods.getGroup.path, (0..<32).map { encoded(GetGroupRequest(guid: "r\($0)")) })
        let listMembers = configuration(
            ModerationMethods.listMembers.path, (0..<32).map { encoded(ListMembersRequest(guid: "r\($0)", limit: 30)) })
        let reports = Mutex<[String: Result<LoadReport, RPCError>]>([:])
        snapshot.take("before", "reads")
        let cpuBefore = server.cpuSeconds
        let started = monotonicNanoseconds()
        let runs = [("GetGroup", getGroup), ("ListMembers", listMembers)]
        DispatchQueue.concurrentPerform(iterations: runs.count) { index in
            let (name, configuration) = runs[index]
            let result = Result { () throws(RPCError) in try LoadGenerator.run(configuration) }
            reports.withLock { $0[name] = result }
        }
        let cpu = server.cpuSeconds - cpuBefore
        let elapsed = Double(monotonicNanoseconds() - started) / 1e9
        snapshot.take("after", "reads")
        print(
            "reads (GetGroup and ListMembers(30) at once, as the groups' owner), \(connections) connections × \(depth) in flight:"
        )
        var total = 0.0
        var calls = 0.0
        for name in ["GetGroup", "ListMembers"] {
            switch reports.withLock({ $0[name] }) {
            case .success(let report)?:
                total += report.callsPerSecond
                calls += Double(report.calls)
                let failed = report.outcomes.filter { $0.key != "OK" }
                print(
                    "  \(name): \(Int(report.callsPerSecond)) calls/s, p50 \(milliseconds(Double(report.latency.percentile(0.5)) / 1e6)) ms"
                        + (failed.isEmpty ? "" : ", failures \(failed)"))
            case .failure(let error)?: throw BenchError("\(name): \(error)")
            case nil: throw BenchError("\(name): no report")
            }
        }
        print(
            "  together \(Int(total)) reads/s; server CPU \(fixed(cpu / elapsed * 100))% of one core, \(fixed(cpu / elapsed / total * 1e6)) µs per read"
        )
    }

    private static func bigGroup(server: ServerProcess, members: Int) throws(BenchError) {
        let client = try connect(server.port)
        print("setting up one group with \(members) members and \(members) bans…")
        _ = try call(client, ModerationMethods.createUser, CreateUserRequest(uid: "owner", name: "Owner"))
        _ = try call(
            client, ModerationMethods.createGroup, CreateGroupRequest(guid: "big", name: "Big", type: .public),
            as: "owner")
        let pending = Collected()
        for start in stride(from: 0, to: 2 * members, by: 100) {
            let uids = (start..<min(start + 100, 2 * members)).map { "user-\($0)" }
            for uid in uids {
                pending.begin()
                client.unary(
                    ModerationMethods.createUser,
                    CreateUserRequest(
                        uid: uid, name: "Member \(uid.dropFirst(5)) \(uid.hasSuffix("7") ? "Seventh" : "Plain")")
                ) { pending.end($0) }
            }
            pending.waitAll()
            if start < members {
                pending.begin()
                client.unary(
                    ModerationMethods.addMembers,
                    AddMembersRequest(guid: "big", members: uids.map { MemberToAdd(uid: $0) }),
                    options: CallOptions(onBehalfOf: "owner")
                ) { pending.end($0) }
            } else {
                pending.begin()
                client.unary(
                    ModerationMethods.bulkBanMembers, BulkBanMembersRequest(guid: "big", uids: uids, reason: "bulk"),
                    options: CallOptions(onBehalfOf: "owner")
                ) { pending.end($0) }
            }
        }
        pending.waitAll()
        if let failure = pending.firstFailure { throw BenchError("setup: \(failure)") }
        func latency(_ body: () throws(BenchError) -> Void) throws(BenchError) -> [Double] {
            var samples: [Double] = []
            for _ in 0..<50 {
                let start = monotonicNanoseconds()
                try body()
                samples.append(Double(monotonicNanoseconds() - start) / 1e6)
            }
            return samples.sorted()
        }
        let banned = try latency { () throws(BenchError) in
            _ = try call(
                client, ModerationMethods.listBannedMembers, ListBannedMembersRequest(guid: "big", limit: 30),
                as: "owner")
        }
        let unique = "user-\(members / 2 + 1)"
        let search = try latency { () throws(BenchError) in
            let page = try call(
                client, ModerationMethods.listMembers, ListMembersRequest(guid: "big", limit: 30, search: unique),
                as: "owner")
            guard page.members.count == 1 else { throw BenchError("search found \(page.members.count) members") }
        }
        let bannedSearch = try latency { () throws(BenchError) in
            _ = try call(
                client, ModerationMethods.listBannedMembers,
                ListBannedMembersRequest(guid: "big", limit: 30, search: "user-\(members + 12_345)"), as: "owner")
        }
        print(
            "group of \(members) members and \(members) bans, one call at a time over the socket (median of 50; p90):")
        print(
            "  ListBannedMembers, first page of 30:   \(milliseconds(banned[25])) ms (p90 \(milliseconds(banned[45])))")
        print(
            "  ListMembers, search by name, 1 match:  \(milliseconds(search[25])) ms (p90 \(milliseconds(search[45])))")
        print(
            "  ListBannedMembers, search, 1 match:    \(milliseconds(bannedSearch[25])) ms (p90 \(milliseconds(bannedSearch[45])))"
        )
    }

    // MARK: Helpers

    static func encoded(_ message: some ProtoMessage) -> [UInt8] {
        var bytes: [UInt8] = []
        _ = message.encode(appendingTo: &bytes)
        return bytes
    }

    /// Milliseconds with three decimals.
    private static func milliseconds(_ value: Double) -> String {
        let micros = Int((value * 1000).rounded())
        let fraction = String(micros % 1000)
        return "\(micros / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    /// Mutation `step` of call slot `slot`: slot s owns user (s / 32) of group (s % 32), and its
    /// steps cycle through Join, Kick, Join, Ban, Unban, each a durable change with one action.
    static func issueMutation(
        slot: Int, step: Int, _ connection: ClientConnection, key: String = "",
        completion: @escaping @Sendable (RPCError?) -> Void
    ) {
        let group = "g\(slot % 32)"
        let user = "g\(slot % 32)-u\(slot / 32)"
        let owner = "owner"
        switch step % 5 {
        case 0, 2:
            connection.unary(
                ModerationMethods.joinGroup, JoinGroupRequest(guid: group),
                options: CallOptions(onBehalfOf: user, idempotencyKey: key)
            ) { completion($0.error) }
        case 1:
            connection.unary(
                ModerationMethods.kickMember, KickMemberRequest(guid: group, uid: user),
                options: CallOptions(onBehalfOf: owner, idempotencyKey: key)
            ) { completion($0.error) }
        case 3:
            connection.unary(
                ModerationMethods.banMember, BanMemberRequest(guid: group, uid: user, reason: "bench"),
                options: CallOptions(onBehalfOf: owner, idempotencyKey: key)
            ) { completion($0.error) }
        default:
            connection.unary(
                ModerationMethods.unbanMember, UnbanMemberRequest(guid: group, uid: user),
                options: CallOptions(onBehalfOf: owner, idempotencyKey: key)
            ) { completion($0.error) }
        }
    }

    /// Keeps `depth` calls in flight on each of `connections` connections for `seconds`, the
    /// connections spread round-robin over the servers at `ports` and, across those, over `apps`
    /// apps (or, `routeByApp`, round-robin over the apps, each app's on one server); `issue`
    /// starts call number `step` of a slot and calls `done` when it ends. Returns the elapsed time.
    static func drive(
        ports: [UInt16], apps: Int = 1, routeByApp: Bool = false, connections: Int, depth: Int, seconds: Double,
        issue: @escaping @Sendable (_ slot: Int, _ step: Int, ClientConnection, @escaping @Sendable () -> Void) -> Void
    ) throws(BenchError) -> Double {
        var clients: [ClientConnection] = []
        for c in 0..<connections {
            if routeByApp {
                clients.append(try connect(ports[(c % apps) % ports.count], app: c % apps))
            } else {
                clients.append(try connect(ports[c % ports.count], app: (c / ports.count) % apps))
            }
        }
        let deadline = monotonicNanoseconds() + UInt64(seconds * 1e9)
        let running = Collected()
        let start = monotonicNanoseconds()
        for (c, client) in clients.enumerated() {
            for d in 0..<depth {
                let slot = c * depth + d
                running.begin()
                Loop(slot: slot, client: client, deadline: deadline, issue: issue) {
                    running.end(Result<Void, RPCError>.success(()))
                }.next(step: 0)
            }
        }
        running.waitAll()
        let elapsed = Double(monotonicNanoseconds() - start) / 1e9
        for client in clients { client.close() }
        return elapsed
    }

    /// One call slot: issues its next call when the previous one ends, until the deadline.
    private struct Loop: Sendable {
        let slot: Int
        let client: ClientConnection
        let deadline: UInt64
        let issue: @Sendable (Int, Int, ClientConnection, @escaping @Sendable () -> Void) -> Void
        let finished: @Sendable () -> Void

        func next(step: Int) {
            guard monotonicNanoseconds() < deadline else {
                finished()
                return
            }
            let loop = self
            issue(slot, step, client) { loop.next(step: step + 1) }
        }
    }

    /// The owner; groups g0…g31 (no members but the owner) with users g<i>-u<j> for the
    /// mutation slots; with `readers`, groups r0…r31 with 100 members each for the reads.
    static func createGroups(
        _ client: ClientConnection, groups: Int, usersPerGroup: Int, readers: Bool = true
    ) throws(BenchError) {
        _ = try call(client, ModerationMethods.createUser, CreateUserRequest(uid: "owner", name: "Owner"))
        let pending = Collected()
        for g in 0..<groups {
            _ = try call(
                client, ModerationMethods.createGroup,
                CreateGroupRequest(guid: "g\(g)", name: "Group \(g)", type: .public), as: "owner")
            if readers {
                _ = try call(
                    client, ModerationMethods.createGroup,
                    CreateGroupRequest(guid: "r\(g)", name: "Readers \(g)", type: .public), as: "owner")
            }
            for u in 0..<usersPerGroup {
                for prefix in readers ? ["g", "r"] : ["g"] {
                    pending.begin()
                    client.unary(
                        ModerationMethods.createUser,
                        CreateUserRequest(uid: "\(prefix)\(g)-u\(u)", name: "User \(u) of \(prefix)\(g)")
                    ) { pending.end($0) }
                }
            }
            pending.waitAll()
            guard readers else { continue }
            _ = try call(
                client, ModerationMethods.addMembers,
                AddMembersRequest(
                    guid: "r\(g)", members: (0..<min(usersPerGroup, 100)).map { MemberToAdd(uid: "r\(g)-u\($0)") }),
                as: "owner")
        }
        if let failure = pending.firstFailure { throw BenchError("setup: \(failure)") }
    }

    /// A client connection to the bench's server child process, named in its logs.
    static func connect(_ port: UInt16, app: Int = 0, name: String = "bench-wire") throws(BenchError)
        -> ClientConnection
    {
        var options = ClientOptions(port: port, apiKey: ServerProcess.apiKey(app: app))
        options.clientName = name
        do throws(RPCError) {
            return try ClientConnection.connect(options)
        } catch {
            throw BenchError("connect: \(error)")
        }
    }

    /// One unary call, a failure thrown as a `BenchError` naming the method.
    static func call<Request, Response>(
        _ client: ClientConnection, timeoutMs: UInt32 = 120_000, _ method: ProtoMethod<Request, Response>,
        _ request: Request,
        as user: String = ""
    ) throws(BenchError) -> Response {
        do throws(RPCError) {
            return try client.unary(method, request, options: CallOptions(timeoutMs: timeoutMs, onBehalfOf: user))
        } catch {
            throw BenchError("\(method.name): \(error)")
        }
    }
}

extension Result {
    var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
