import CommandLineSupport
internal import Glibc
import ModerationMessages
import ProtoBridge
import RPCCore
import RPCPosix
import ThreadSupport

/// `moderation-bench fanout`: the event stream over real sockets, against a release
/// `moderation-server` child process.
///
/// 10 000 users join one group and each subscribes to its own events on its own connection. Then:
/// the latency of one action reaching all of them (from the mutation's send, and from the first
/// delivery to the last), the sustained deliveries per second under a stream of updates, the
/// compression ratio of a realistic mixed event stream, and the server's memory per subscription
/// with and without compression.
enum FanoutBenchmark {
    static func run(arguments: [String]) -> Int32 {
        var subscribers = 10_000
        var rounds = 7
        var seconds = 5.0
        var executable = ".build/release/moderation-server"
        let flagsRead = SuiteFlags.read(arguments, suite: "fanout") { flag, reader throws(ArgumentError) in
            switch flag.name {
            case "--subscribers": subscribers = try reader.value(for: flag).integer(in: 1...1_000_000)
            case "--rounds": rounds = try reader.value(for: flag).integer(in: 1...1000)
            case "--seconds": seconds = try SuiteFlags.seconds(reader.value(for: flag))
            case "--server": executable = try reader.value(for: flag).text
            default: return false
            }
            return true
        }
        guard flagsRead else { return 2 }
        do throws(BenchError) {
            try measure(executable: executable, subscribers: subscribers, rounds: rounds, seconds: seconds)
            return 0
        } catch {
            print("fanout: \(error)")
            return 1
        }
    }

    private static func measure(executable: String, subscribers: Int, rounds: Int, seconds: Double) throws(BenchError) {
        let server = try ServerProcess(executable: executable)
        defer { server.stop() }
        let client = try WireBenchmark.connect(server.port, name: "bench-fanout")
        print("setting up \(subscribers) members of group 'fan'…")
        try setUp(client, members: subscribers)

        // Latency: one action to every subscriber.
        let rssBefore = server.residentBytes
        let swarm = try SubscriberSwarm(port: server.port, count: subscribers, compressed: false) { "u\($0)" }
        try waitForSubscriptions(server, swarm, count: subscribers)
        _ = try WireBenchmark.call(
            client, timeoutMs: 60_000, ModerationMethods.updateGroup,
            UpdateGroupRequest(guid: "fan", description: "warm-up"), as: "owner")
        var seq = try head(client)
        let warm = swarm.wait(forSeq: seq, timeoutMs: 30_000)
        guard warm.reached == subscribers else {
            throw BenchError(
                "only \(warm.reached) of \(subscribers) subscribers got the first event; ended: \(swarm.ended.prefix(3))"
            )
        }
        let rssPlain = server.residentBytes
        var fromSend: [Double] = []
        var spread: [Double] = []
        for round in 1...rounds {
            let sent = monotonicNanoseconds()
            seq = try update(client, round: round, previous: seq)
            let result = swarm.wait(forSeq: seq, timeoutMs: 30_000)
            guard result.reached == subscribers else {
                throw BenchError("round \(round): \(result.reached) of \(subscribers) got seq \(seq)")
            }
            fromSend.append(Double(result.last - sent) / 1e6)
            spread.append(Double(result.last - result.first) / 1e6)
        }
        print("one action to \(subscribers) subscribers, median of \(rounds) rounds:")
        print(
            "  mutation sent → last subscriber received: \(fixed(median(fromSend))) ms (min \(fixed(fromSend.min()!)), max \(fixed(fromSend.max()!)))"
        )
        print(
            "  first subscriber received → last:          \(fixed(median(spread))) ms (min \(fixed(spread.min()!)), max \(fixed(spread.max()!)))"
        )

        // Sustained deliveries: updates as fast as the writer commits them, for `seconds`.
        let writer = startUpdates(port: server.port, seconds: seconds)
        let cpuBefore = server.cpuSeconds
        let delivered = swarm.drain(milliseconds: Int(seconds * 1000))
        let cpu = server.cpuSeconds - cpuBefore
        let actions = writer.wait()
        _ = swarm.drain(milliseconds: 300)
        print(
            "sustained: \(Int(Double(delivered) / seconds)) deliveries/s (\(actions) actions in \(fixed(seconds)) s × \(subscribers) subscribers; server CPU \(fixed(cpu / seconds * 100))% of one core)"
        )
        if !swarm.ended.isEmpty { print("  streams ended: \(swarm.ended.count), e.g. \(swarm.ended[0])") }

        // Compression and memory: as many compressed subscribers as plain ones get the same mixed
        // stream; the bytes each side receives give the ratio.
        let compressedCount = min(2_000, subscribers)
        let rssBeforeCompressed = server.residentBytes
        let compressed = try SubscriberSwarm(port: server.port, count: compressedCount, compressed: true) { "u\($0)" }
        try waitForSubscriptions(server, compressed, count: subscribers + compressedCount)
        _ = swarm.drain(milliseconds: 500)
        let plainBefore = swarm.totalWireBytes
        let plainMessagesBefore = swarm.totalMessages
        try mixedEvents(client, count: 240)
        var waited = 0
        while waited < 20,
            compressed.totalMessages * UInt64(subscribers) < (swarm.totalMessages - plainMessagesBefore)
                * UInt64(compressedCount) || waited < 2
        {
            _ = compressed.drain(milliseconds: 250)
            _ = swarm.drain(milliseconds: 250)
            waited += 1
        }
        let rssCompressed = server.residentBytes
        // Bytes per event on each side (either side may still be behind when the wait ends, so
        // the ratio is of averages over the events each received, not of totals).
        let plainMessages = swarm.totalMessages - plainMessagesBefore
        let plainPerEvent = Double(swarm.totalWireBytes - plainBefore) / Double(max(plainMessages, 1))
        let compressedPerEvent = Double(compressed.totalWireBytes) / Double(max(compressed.totalMessages, 1))
        print("compression, a mixed stream of 240 actions (updates, kicks, joins, scope changes, bans, unbans, adds):")
        print(
            "  \(plainMessages) plain events, \(fixed(plainPerEvent)) bytes each on the wire; \(compressed.totalMessages) compressed events, \(fixed(compressedPerEvent)) bytes each: ratio \(fixed(plainPerEvent / max(compressedPerEvent, 1)))×"
        )
        print("memory (server RSS):")
        print("  per plain subscription (connection + stream):  \(Int(rssPlain - rssBefore) / subscribers) bytes")
        print(
            "  per compressed subscription, deflate context in use: \(Int(rssCompressed - rssBeforeCompressed) / compressedCount) bytes"
        )
    }

    /// A subscription sees the events committed after the server registered it: waits until the
    /// server's gauge counts `count` open subscriptions (reading the swarm meanwhile).
    private static func waitForSubscriptions(_ server: ServerProcess, _ swarm: SubscriberSwarm, count: Int)
        throws(BenchError)
    {
        let deadline = monotonicNanoseconds() + 120_000_000_000
        var open = 0.0
        while monotonicNanoseconds() < deadline {
            open = server.metric("moderation_subscriptions_open") ?? 0
            if open >= Double(count) { return }
            _ = swarm.drain(milliseconds: 100)
        }
        throw BenchError("only \(Int(open)) of \(count) subscriptions open after 120 s")
    }

    /// Users u0…u(n-1), owner "owner", group "fan" with all of them as members.
    private static func setUp(_ client: ClientConnection, members: Int) throws(BenchError) {
        _ = try WireBenchmark.call(
            client, timeoutMs: 60_000, ModerationMethods.createUser, CreateUserRequest(uid: "owner", name: "Owner"))
        _ = try WireBenchmark.call(
            client, timeoutMs: 60_000, ModerationMethods.createGroup,
            CreateGroupRequest(guid: "fan", name: "Fan-out", type: .public), as: "owner")
        let pending = Collected()
        for start in stride(from: 0, to: members, by: 100) {
            let uids = (start..<min(start + 100, members)).map { "u\($0)" }
            for uid in uids {
                pending.begin()
                client.unary(ModerationMethods.createUser, CreateUserRequest(uid: uid, name: "User \(uid)")) {
                    pending.end($0)
                }
            }
            pending.waitAll()
            _ = try WireBenchmark.call(
                client, timeoutMs: 60_000, ModerationMethods.addMembers,
                AddMembersRequest(guid: "fan", members: uids.map { MemberToAdd(uid: $0, scope: .participant) }),
                as: "owner")
        }
        if let failure = pending.firstFailure { throw BenchError("CreateUser: \(failure)") }
    }

    /// One UpdateGroup: one action, the next seq after `previous` (nothing else writes meanwhile).
    private static func update(_ client: ClientConnection, round: Int, previous: UInt64) throws(BenchError) -> UInt64 {
        _ = try WireBenchmark.call(
            client, timeoutMs: 60_000, ModerationMethods.updateGroup,
            UpdateGroupRequest(guid: "fan", description: "round \(round) \(monotonicNanoseconds())"), as: "owner")
        return previous + 1
    }

    /// The seq of the group's newest action.
    private static func head(_ client: ClientConnection) throws(BenchError) -> UInt64 {
        var after: UInt64 = 0
        while true {
            let page = try WireBenchmark.call(
                client, timeoutMs: 60_000, ModerationMethods.listGroupActions,
                ListGroupActionsRequest(guid: "fan", afterSeq: after, limit: 100), as: "owner")
            if let last = page.actions.last { after = last.seq }
            if page.nextCursor.isEmpty { return after }
        }
    }

    /// Updates from a second connection, several in flight, for `seconds`.
    private static func startUpdates(port: UInt16, seconds: Double) -> Background {
        Background(name: "bench-updates") {
            guard let client = try? WireBenchmark.connect(port, name: "bench-fanout") else { return 0 }
            let deadline = monotonicNanoseconds() + UInt64(seconds * 1e9)
            let done = Collected()
            var count = 0
            while monotonicNanoseconds() < deadline {
                for _ in 0..<8 {
                    count += 1
                    done.begin()
                    client.unary(
                        ModerationMethods.updateGroup, UpdateGroupRequest(guid: "fan", description: "load \(count)"),
                        options: CallOptions(onBehalfOf: "owner")
                    ) { done.end($0) }
                }
                done.waitAll()
            }
            client.close()
            return count
        }
    }

    /// A realistic mix: updates, joins, kicks, bans, unbans and scope changes of a few members.
    private static func mixedEvents(_ client: ClientConnection, count: Int) throws(BenchError) {
        for i in 0..<count {
            let uid = "u\((i / 6) % 50)"
            switch i % 6 {
            case 0:
                _ = try WireBenchmark.call(
                    client, timeoutMs: 60_000, ModerationMethods.updateGroup,
                    UpdateGroupRequest(guid: "fan", description: "Topic of the day #\(i)"), as: "owner")
            case 1:
                _ = try WireBenchmark.call(
                    client, timeoutMs: 60_000, ModerationMethods.kickMember, KickMemberRequest(guid: "fan", uid: uid),
                    as: "owner")
            case 2:
                _ = try WireBenchmark.call(
                    client, timeoutMs: 60_000, ModerationMethods.joinGroup, JoinGroupRequest(guid: "fan"), as: uid)
            case 3:
                _ = try WireBenchmark.call(
                    client, timeoutMs: 60_000, ModerationMethods.changeMemberScope,
                    ChangeMemberScopeRequest(guid: "fan", uid: uid, scope: .moderator), as: "owner")
            case 4:
                _ = try WireBenchmark.call(
                    client, timeoutMs: 60_000, ModerationMethods.banMember,
                    BanMemberRequest(guid: "fan", uid: uid, reason: "spam links", durationMs: 60_000), as: "owner")
            default:
                _ = try WireBenchmark.call(
                    client, timeoutMs: 60_000, ModerationMethods.unbanMember, UnbanMemberRequest(guid: "fan", uid: uid),
                    as: "owner")
                _ = try WireBenchmark.call(
                    client, timeoutMs: 60_000, ModerationMethods.addMembers,
                    AddMembersRequest(guid: "fan", members: [MemberToAdd(uid: uid)]), as: "owner")
            }
        }
    }

    private static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
}

/// Calls in flight and the first failure among them.
final class Collected: Sendable {
    private struct State {
        var outstanding = 0
        var firstFailure: String?
    }

    private let state = ConditionLock(State())

    /// The first call that failed, if any.
    var firstFailure: String? { state.withLock { $0.firstFailure } }

    func begin() {
        state.withLock { $0.outstanding += 1 }
    }

    func end<T>(_ result: Result<T, RPCError>) {
        state.withLock { state in
            state.outstanding -= 1
            if case .failure(let error) = result, state.firstFailure == nil { state.firstFailure = error.description }
        }
        state.broadcast()
    }

    func waitAll() {
        state.withLock(when: { $0.outstanding <= 0 }) { _ in }
    }
}

/// Work on its own thread whose result is waited for.
final class Background: Sendable {
    private let result: ConditionLock<Int>
    private let thread: WorkerThread

    init(name: String, _ work: @escaping @Sendable () -> Int) {
        let result = ConditionLock(0)
        self.result = result
        thread = WorkerThread(name: name) {
            let value = work()
            result.withLock { $0 = value }
        }
    }

    func wait() -> Int {
        thread.join()
        return result.withLock { $0 }
    }
}
