import LoadGeneration
import ModerationMessages
import ProtoBridge
import RPCCore
import RPCPosix

extension WireBenchmark {
    /// CheckPost, the call a message service makes before every message, against the same server
    /// in the same run: one pair a call against GetMemberState (the other short read about one
    /// user in one group), and 100 pairs a call against one pair a call, in pairs answered per
    /// second. The phases alternate for `rounds` rounds so that the machine's drift hits each
    /// alike; the ratios are taken within each round (its phases seconds apart) and reported as
    /// their median, like every other figure.
    ///
    /// The data: groups r0…r31 of 100 members (made by `createGroups`), 5 members of each muted
    /// and r31 frozen, so the answers mix allowed, muted and frozen. The app asks (as a message
    /// service does, about any user), with pre-encoded calls from `LoadGenerator` (the engine of
    /// `rpc-probe bench`), so the client costs less per call than the server.
    static func checkPost(
        server: ServerProcess, connections: Int, depth: Int, seconds: Double, rounds: Int, snapshot: Snapshot
    ) throws(BenchError) {
        let setup = try connect(server.port)
        defer { setup.close() }
        for g in 0..<32 {
            _ = try call(
                setup, ModerationMethods.bulkMuteMembers,
                BulkMuteMembersRequest(guid: "r\(g)", uids: (0..<5).map { "r\(g)-u\($0 * 20)" }, reason: "bench"),
                as: "owner")
        }
        _ = try call(
            setup, ModerationMethods.freezeGroup, FreezeGroupRequest(guid: "r31", reason: "bench"), as: "owner")

        let pairs = (0..<3200).map { index in (guid: "r\(index % 32)", uid: "r\(index % 32)-u\((index / 32) % 100)") }
        let phases: [Phase] = [
            Phase(
                name: "GetMemberState", path: ModerationMethods.getMemberState.path, pairsPerCall: 1,
                bodies: pairs.map { encoded(GetMemberStateRequest(guid: $0.guid, uid: $0.uid)) }),
            Phase(
                name: "CheckPost ×1", path: ModerationMethods.checkPost.path, pairsPerCall: 1,
                bodies: pairs.map { encoded(CheckPostRequest(checks: [PostCheck(guid: $0.guid, uid: $0.uid)])) }),
            Phase(
                name: "CheckPost ×100", path: ModerationMethods.checkPost.path, pairsPerCall: 100,
                bodies: (0..<32).map { body in
                    encoded(
                        CheckPostRequest(
                            checks: (0..<100).map { i in
                                let pair = pairs[(body * 100 + i * 33) % pairs.count]
                                return PostCheck(guid: pair.guid, uid: pair.uid)
                            }))
                }),
        ]
        print(
            "CheckPost against GetMemberState (the app asking; 32 groups of 100 members, 5 muted in each, one frozen), \(connections) connections × \(depth) in flight, \(rounds) rounds of \(fixed(seconds)) s per phase:"
        )
        var results: [String: [Measured]] = [:]
        var singleRatios: [Double] = []
        var batchRatios: [Double] = []
        snapshot.take("before", "checkpost")
        for round in 1...rounds {
            var line: [String] = []
            for phase in phases {
                let measured = try phase.run(
                    server: server, connections: connections, depth: depth, seconds: seconds)
                results[phase.name, default: []].append(measured)
                line.append(
                    "\(phase.name) \(Int(measured.callsPerSecond)) calls/s"
                        + (phase.pairsPerCall > 1 ? " = \(Int(measured.pairsPerSecond)) pairs/s" : "")
                        + " (\(fixed(measured.cpuPerPair * 1e6)) µs server CPU per \(phase.pairsPerCall > 1 ? "pair" : "call"))"
                )
            }
            let memberState = results["GetMemberState"]!.last!
            let single = results["CheckPost ×1"]!.last!
            let batch = results["CheckPost ×100"]!.last!
            singleRatios.append(single.callsPerSecond / max(memberState.callsPerSecond, 1))
            batchRatios.append(batch.pairsPerSecond / max(single.pairsPerSecond, 1))
            print(
                "  round \(round): " + line.joined(separator: "; ")
                    + "; ratios \(fixed(singleRatios.last!))× and \(fixed(batchRatios.last!))×")
        }
        snapshot.take("after", "checkpost")
        func median(_ name: String, _ value: (Measured) -> Double) -> Double {
            let values = (results[name] ?? []).map(value).sorted()
            return values.isEmpty ? 0 : values[values.count / 2]
        }
        let memberState = median("GetMemberState", \.callsPerSecond)
        let single = median("CheckPost ×1", \.callsPerSecond)
        let batchPairs = median("CheckPost ×100", \.pairsPerSecond)
        let singleRatio = singleRatios.sorted()[singleRatios.count / 2]
        let batchRatio = batchRatios.sorted()[batchRatios.count / 2]
        print(
            "  median: GetMemberState \(Int(memberState)) calls/s, p50 \(fixed(median("GetMemberState", \.p50Ms))) ms; CheckPost ×1 \(Int(single)) calls/s, p50 \(fixed(median("CheckPost ×1", \.p50Ms))) ms; CheckPost ×100 \(Int(batchPairs)) pairs/s, p50 \(fixed(median("CheckPost ×100", \.p50Ms))) ms"
        )
        print(
            "  CheckPost ×1 / GetMemberState, median of the rounds' ratios: \(fixed(singleRatio))× the calls/s (target ≥ 2×: \(singleRatio >= 2 ? "met" : "not met"))"
        )
        print(
            "  CheckPost ×100 / CheckPost ×1, median of the rounds' ratios: \(fixed(batchRatio))× the pairs/s (target ≥ 10×: \(batchRatio >= 10 ? "met" : "not met"))"
        )
        let failures = results.values.flatMap { $0 }.flatMap(\.failures)
        if !failures.isEmpty { print("  failures: \(failures.prefix(5))") }
    }

    /// One phase of the CheckPost benchmarks: a method, its pre-encoded requests, and how many
    /// pairs each call asks about.
    struct Phase {
        let name: String
        let path: String
        let pairsPerCall: Int
        let bodies: [[UInt8]]

        func run(server: ServerProcess, connections: Int, depth: Int, seconds: Double) throws(BenchError) -> Measured {
            var configuration = LoadConfiguration()
            configuration.client = ClientOptions(port: server.port, apiKey: ServerProcess.apiKey)
            configuration.path = path
            configuration.bodies = bodies
            configuration.connections = connections
            configuration.depth = depth
            configuration.durationSeconds = seconds
            configuration.warmupSeconds = 0.5
            let cpuBefore = server.cpuSeconds
            let report: LoadReport
            do throws(RPCError) {
                report = try LoadGenerator.run(configuration)
            } catch {
                throw BenchError("\(name): \(error)")
            }
            // The warm-up's calls are not in the report but its CPU is in the sample: the pairs
            // are scaled to the whole time, at the measured rate.
            let cpu = server.cpuSeconds - cpuBefore
            let pairs = Double(report.calls) * Double(pairsPerCall)
            return Measured(
                callsPerSecond: report.callsPerSecond, pairsPerSecond: report.callsPerSecond * Double(pairsPerCall),
                cpuPerPair: pairs > 0 ? cpu / (pairs * (seconds + configuration.warmupSeconds) / seconds) : 0,
                p50Ms: Double(report.latency.percentile(0.5)) / 1e6,
                p99Ms: Double(report.latency.percentile(0.99)) / 1e6,
                clientCPUPerCall: report.clientCPUNanosecondsPerCall / 1e9,
                failures: report.outcomes.filter { $0.key != "OK" }.map { "\(name) \($0.key) × \($0.value)" })
        }
    }

    struct Measured {
        let callsPerSecond: Double
        let pairsPerSecond: Double
        let cpuPerPair: Double
        let p50Ms: Double
        let p99Ms: Double
        /// The load generator's CPU per call, in seconds: below the server's, the client is not
        /// what limits the rate.
        let clientCPUPerCall: Double
        let failures: [String]
    }
}
