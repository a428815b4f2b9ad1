internal import Glibc
import LoadGeneration
import ModerationMessages
import ProtoBridge
import RPCCore
import RPCPosix
import SeededRandom
import Synchronization

extension WireBenchmark {
    /// The most rules the app's set may hold (the service refuses more).
    static let appContentRuleLimit = 10_000

    /// Content rules at the service: CheckPost with a 280-byte text per pair against the same
    /// batches without text, and CheckPost's latency while the app's set recompiles.
    ///
    /// The app's set is `content-bench --write-rules`'s, loaded as the app does (AddContentRules,
    /// 1 000 rules a call); the service holds at most 10 000 app-wide rules, so every regex and
    /// as many word rules as fit are loaded. The pairs are those of `checkPost` (groups r0…r31
    /// of 100 members), 100 a call; one pair in a hundred has a rule's word in its text.
    ///
    /// - Throughput: "without text" and "with text" alternate for `rounds` rounds, pairs/s and
    ///   server CPU per pair each, the ratio taken within each round.
    /// - Stall: at a fixed rate (a quarter of what the with-text phase reached), windows with
    ///   the app's set recompiling back to back (another connection deletes one word rule and adds
    ///   it back, each change answered once its set is compiled) alternate with quiet windows;
    ///   CheckPost's p99 in each, and each change's time as its caller sees it. Pinned, the
    ///   compile thread shares the server's one core with the event loop: the worst case for the
    ///   loop, and the load generator's core stays its own, so the latencies are the server's.
    static func contentRules(
        server: ServerProcess, rulesFile: String, connections: Int, depth: Int, seconds: Double, rounds: Int,
        pinned: Bool, snapshot: Snapshot
    ) throws(BenchError) {
        let (rules, leftOut) = try readRules(rulesFile)
        let setup = try connect(server.port, name: "bench-rules")
        defer { setup.close() }
        var loadSeconds: [Double] = []
        var loaded: [ContentRule] = []
        let loadStart = monotonicNanoseconds()
        for start in stride(from: 0, to: rules.count, by: 1_000) {
            let callStart = monotonicNanoseconds()
            let response = try call(
                setup, ModerationMethods.addContentRules,
                AddContentRulesRequest(rules: Array(rules[start..<min(start + 1_000, rules.count)])))
            loadSeconds.append(Double(monotonicNanoseconds() - callStart) / 1e9)
            if let refused = response.results.first(where: { !$0.ok }) {
                throw BenchError("AddContentRules refused a rule: \(refused.errorCode) \(refused.message)")
            }
            loaded += response.results.compactMap(\.rule)
        }
        let loadTotal = Double(monotonicNanoseconds() - loadStart) / 1e9
        let regexes = loaded.filter { $0.kind == .regex }.count
        print(
            "content rules (the app's set from \(rulesFile): \(loaded.count - regexes) WORD and \(regexes) REGEX rules, the service's limit of \(appContentRuleLimit)\(leftOut > 0 ? "; \(leftOut) word rules of the file left out" : "")):"
        )
        print(
            "  loaded in \(loadSeconds.count) AddContentRules calls of ≤ 1 000 rules: \(fixed(loadTotal)) s in all; the last call (answered once the full set was compiled) \(Int(loadSeconds.last! * 1000)) ms"
        )

        // Plain single words, whose text is the pattern itself; the last one is the rule the
        // stall phase deletes and adds back, so no text contains it.
        let words = loaded.filter { $0.kind == .word && !$0.pattern.contains("*") && !$0.pattern.contains(" ") }
        guard let churned = words.last, words.count > 1 else { throw BenchError("no plain word rules") }
        let pairs = (0..<3200).map { index in (guid: "r\(index % 32)", uid: "r\(index % 32)-u\((index / 32) % 100)") }
        var random = SplitMix64(seed: 280) // seeded: every run posts the same texts
        func batch(_ body: Int, text: Bool) -> CheckPostRequest {
            CheckPostRequest(
                checks: (0..<100).map { i in
                    let pair = pairs[(body * 100 + i * 33) % pairs.count]
                    guard text else { return PostCheck(guid: pair.guid, uid: pair.uid) }
                    let matching = i == body % 100 ? words[(body * 7919) % (words.count - 1)].pattern : nil
                    return PostCheck(guid: pair.guid, uid: pair.uid, text: postText(matching, using: &random))
                })
        }
        let textRequests = (0..<32).map { batch($0, text: true) }
        let withText = textRequests.map(encoded)
        let phases = [
            Phase(
                name: "without text", path: ModerationMethods.checkPost.path, pairsPerCall: 100,
                bodies: (0..<32).map { encoded(batch($0, text: false)) }),
            Phase(name: "with text", path: ModerationMethods.checkPost.path, pairsPerCall: 100, bodies: withText),
        ]
        // What the texts do, once each: how many pairs were allowed by their standing (so
        // scanned) and how many of those a rule blocked.
        var scanned = 0
        var blocked = 0
        for request in textRequests {
            for result in try call(setup, ModerationMethods.checkPost, request).results {
                if result.allowed || result.errorCode == "ERR_CONTENT_BLOCKED" { scanned += 1 }
                if result.errorCode == "ERR_CONTENT_BLOCKED" { blocked += 1 }
            }
        }
        print(
            "  texts: 280 bytes each (English filler, some words accented), \(withText.count * 100) pairs in \(withText.count) calls; \(scanned) allowed by their standing and scanned, \(blocked) of those blocked by a rule (\(fixed(Double(blocked) * 100 / Double(max(scanned, 1))))%)"
        )

        print(
            "  CheckPost ×100 with text against without, \(connections) connections × \(depth) in flight, \(rounds) rounds of \(fixed(seconds)) s per phase:"
        )
        var results: [String: [Measured]] = [:]
        var ratios: [Double] = []
        snapshot.take("before", "content")
        for round in 1...rounds {
            var line: [String] = []
            for phase in round % 2 == 1 ? phases : phases.reversed() {
                let measured = try phase.run(server: server, connections: connections, depth: depth, seconds: seconds)
                results[phase.name, default: []].append(measured)
                line.append(
                    "\(phase.name) \(Int(measured.pairsPerSecond)) pairs/s (\(fixed(measured.cpuPerPair * 1e6)) µs server CPU per pair, client \(fixed(measured.clientCPUPerCall * 1e6 / 100)) µs per pair)"
                )
            }
            ratios.append(
                results["with text"]!.last!.pairsPerSecond / max(results["without text"]!.last!.pairsPerSecond, 1))
            print("    round \(round): " + line.joined(separator: "; ") + "; ratio \(hundredths(ratios.last!))×")
        }
        snapshot.take("after", "content")
        func median(_ name: String, _ value: (Measured) -> Double) -> Double {
            middle((results[name] ?? []).map(value))
        }
        let ratio = middle(ratios)
        for name in ["without text", "with text"] {
            print(
                "    median \(name): \(Int(median(name, \.pairsPerSecond))) pairs/s, \(fixed(median(name, \.cpuPerPair) * 1e6)) µs server CPU per pair, p50 \(hundredths(median(name, \.p50Ms))) ms a call; load generator \(fixed(median(name, \.clientCPUPerCall) * 1e6)) µs CPU per call against the server's \(fixed(median(name, \.cpuPerPair) * 1e8)) µs"
            )
        }
        print(
            "    with text / without, median of the rounds' ratios: \(hundredths(ratio))× the pairs/s (target ≥ 0.5×: \(ratio >= 0.5 ? "met" : "not met")); the text costs \(fixed((median("with text", \.cpuPerPair) - median("without text", \.cpuPerPair)) * 1e6)) µs server CPU per pair"
        )

        let rate = max(100, median("with text", \.callsPerSecond) / 4)
        try compileStall(
            server: server, bodies: withText, churned: churned, rate: rate, seconds: seconds, rounds: rounds,
            place: pinned ? "the compile thread on the server's one core (CPU 0), beside the event loop" : "")
        let failures = results.values.flatMap { $0 }.flatMap(\.failures)
        if !failures.isEmpty { print("  failures: \(failures.prefix(5))") }
    }

    /// CheckPost with text at `rate` calls/s on one connection (up to 4 in flight), in windows
    /// of `seconds`: quiet ones, and ones during which another connection deletes `churned` and
    /// adds it back, again and again, so that the app's set is being compiled nearly all the time.
    /// `place` says where the compile thread runs.
    private static func compileStall(
        server: ServerProcess, bodies: [[UInt8]], churned: ContentRule, rate: Double, seconds: Double, rounds: Int,
        place: String
    ) throws(BenchError) {
        print(
            "  CheckPost ×100 with text at \(Int(rate)) calls/s (a quarter of the rate above; 1 connection, ≤ 4 in flight), \(rounds) rounds of a quiet window and a window of back-to-back recompiles of the app's set, \(fixed(seconds)) s each\(place.isEmpty ? "" : "; \(place)"):"
        )
        let churnClient = try connect(server.port, name: "bench-churn")
        defer { churnClient.close() }
        let churnedID = Mutex<UInt64>(churned.id)
        var quiet = LatencyHistogram()
        var compiling = LatencyHistogram()
        var ratios: [Double] = []
        var changes: [Double] = []
        var compileCPU = 0.0
        var compileWall = 0.0
        for round in 1...rounds {
            var p99: [Bool: Double] = [:]
            var line: [String] = []
            for recompiling in round % 2 == 1 ? [false, true] : [true, false] {
                let stop = Atomic<Bool>(false)
                let durations = Mutex<[Double]>([])
                let failure = Mutex<String?>(nil)
                let cpuBefore = server.threadCPUSeconds(named: "content-rules") ?? 0
                let started = monotonicNanoseconds()
                let churn = Background(name: "rule-churn") {
                    guard recompiling else { return 0 }
                    while !stop.load(ordering: .relaxed) {
                        let start = monotonicNanoseconds()
                        do throws(BenchError) {
                            let id = churnedID.withLock { $0 }
                            let deleted = try call(
                                churnClient, ModerationMethods.deleteContentRules, DeleteContentRulesRequest(ids: [id]))
                            guard deleted.results.first?.ok == true else {
                                throw BenchError("DeleteContentRules: \(deleted.results.first?.message ?? "no result")")
                            }
                            let middle = monotonicNanoseconds()
                            let added = try call(
                                churnClient, ModerationMethods.addContentRules,
                                AddContentRulesRequest(
                                    rules: [
                                        NewContentRule(kind: churned.kind, pattern: churned.pattern, action: .block)
                                    ]))
                            guard let rule = added.results.first?.rule, added.results.first?.ok == true else {
                                throw BenchError("AddContentRules: \(added.results.first?.message ?? "no result")")
                            }
                            churnedID.withLock { $0 = rule.id }
                            let end = monotonicNanoseconds()
                            durations.withLock {
                                $0 += [Double(middle - start) / 1e9, Double(end - middle) / 1e9]
                            }
                        } catch {
                            failure.withLock { $0 = error.description }
                            return 1
                        }
                    }
                    return 0
                }
                var configuration = LoadConfiguration()
                configuration.client = ClientOptions(port: server.port, apiKey: ServerProcess.apiKey)
                configuration.path = ModerationMethods.checkPost.path
                configuration.bodies = bodies
                configuration.connections = 1
                configuration.depth = 4
                configuration.rate = rate
                configuration.durationSeconds = seconds
                configuration.warmupSeconds = 0.2
                let result = Result { () throws(RPCError) in try LoadGenerator.run(configuration) }
                stop.store(true, ordering: .relaxed)
                _ = churn.wait()
                let elapsed = Double(monotonicNanoseconds() - started) / 1e9
                let cpu = (server.threadCPUSeconds(named: "content-rules") ?? 0) - cpuBefore
                if let failed = failure.withLock({ $0 }) { throw BenchError(failed) }
                let report: LoadReport
                switch result {
                case .success(let value): report = value
                case .failure(let error): throw BenchError("CheckPost during the stall phase: \(error)")
                }
                let failed = report.outcomes.filter { $0.key != "OK" }
                if !failed.isEmpty { throw BenchError("CheckPost during the stall phase: \(failed)") }
                let tail = Double(report.latency.percentile(0.99)) / 1e6
                p99[recompiling] = tail
                if recompiling {
                    compiling.merge(report.latency)
                    let made = durations.withLock { $0 }
                    changes += made
                    compileCPU += cpu
                    compileWall += elapsed
                    line.append(
                        "recompiling: p99 \(hundredths(tail)) ms over \(report.calls) calls, \(made.count) changes (compile thread busy \(Int(cpu / elapsed * 100))% of the window)"
                    )
                } else {
                    quiet.merge(report.latency)
                    line.append("quiet: p99 \(hundredths(tail)) ms over \(report.calls) calls")
                }
            }
            ratios.append(p99[true]! / max(p99[false]!, 0.001))
            print("    round \(round): " + line.joined(separator: "; ") + "; ratio \(hundredths(ratios.last!))×")
        }
        let ratio = middle(ratios)
        let sorted = changes.sorted()
        func percentileMs(_ histogram: LatencyHistogram, _ fraction: Double) -> String {
            hundredths(Double(histogram.percentile(fraction)) / 1e6)
        }
        print(
            "    all rounds: quiet p50 \(percentileMs(quiet, 0.5)) ms, p99 \(percentileMs(quiet, 0.99)) ms, max \(percentileMs(quiet, 1)) ms; recompiling p50 \(percentileMs(compiling, 0.5)) ms, p99 \(percentileMs(compiling, 0.99)) ms, max \(percentileMs(compiling, 1)) ms"
        )
        print(
            "    p99 recompiling / quiet, median of the rounds' ratios: \(hundredths(ratio))× (target ≤ 2×: \(ratio <= 2 ? "met" : "not met"))"
        )
        if !sorted.isEmpty {
            print(
                "    a change of the \(appContentRuleLimit)-rule set as its caller sees it (write, fsync, compile, swap): median \(Int(middle(sorted) * 1000)) ms, p90 \(Int(sorted[sorted.count * 9 / 10] * 1000)) ms, max \(Int(sorted.last! * 1000)) ms over \(sorted.count) changes (target ≤ 1 s: \(middle(sorted) <= 1 ? "met" : "not met")); compile thread CPU \(Int(compileCPU / Double(sorted.count) * 1000)) ms per change, busy \(Int(compileCPU / max(compileWall, 0.001) * 100))% of the recompiling windows"
            )
        }
    }

    /// The rules of a `content-bench --write-rules` file (`KIND<TAB>ACTION<TAB>pattern` a line):
    /// every regex and as many word rules as the app's limit leaves room for, and how many word
    /// rules did not fit.
    private static func readRules(_ path: String) throws(BenchError) -> (rules: [NewContentRule], leftOut: Int) {
        guard let file = fopen(path, "r") else { throw BenchError("cannot open \(path)") }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&chunk, 1, chunk.count, file)
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        var wordRules: [NewContentRule] = []
        var regexRules: [NewContentRule] = []
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { throw BenchError("\(path): not KIND<TAB>ACTION<TAB>pattern: \(line)") }
            let action: ContentAction = fields[1] == "FLAG" ? .flag : .block
            switch fields[0] {
            case "WORD": wordRules.append(NewContentRule(kind: .word, pattern: String(fields[2]), action: action))
            case "REGEX": regexRules.append(NewContentRule(kind: .regex, pattern: String(fields[2]), action: action))
            default: throw BenchError("\(path): unknown kind \(fields[0])")
            }
        }
        let room = max(0, appContentRuleLimit - regexRules.count)
        return (Array(wordRules.prefix(room)) + regexRules, max(0, wordRules.count - room))
    }

    /// A post of exactly 280 bytes of English filler, which no rule of the set matches (its
    /// words have letters the rules' words never use, or are too short), a word in ten accented;
    /// with `matching`, that word among the first twenty.
    private static func postText(_ matching: String?, using random: inout SplitMix64) -> String {
        let filler = [
            "the", "and", "of", "to", "we", "will", "meet", "at", "station", "tomorrow", "morning", "thanks",
            "for", "your", "help", "with", "this", "photo", "looks", "great", "see", "you", "later", "ok",
            "where", "is", "party", "tonight", "lol", "that", "was", "funny", "coffee", "after", "class",
        ]
        let accented = ["café", "déjà", "Über", "Zoë", "crème", "façade", "Ångström", "CAFÉ"]
        var words: [String] = []
        var length = 0
        while length < 300 {
            let word =
                random.below(10) == 0 ? accented[random.below(accented.count)] : filler[random.below(filler.count)]
            words.append(word)
            length += word.utf8.count + 1
        }
        if let matching { words[random.below(20)] = matching }
        var bytes = Array(words.joined(separator: " ").utf8)
        while bytes.count > 280 { bytes.removeLast() }
        while let last = bytes.last, last >= 0x80 { bytes.removeLast() }
        while bytes.count < 280 { bytes.append(UInt8(ascii: ".")) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The middle value (the upper one of an even count).
    static func middle(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    /// `value` with two decimals.
    static func hundredths(_ value: Double) -> String {
        let scaled = Int((value * 100).rounded())
        let fraction = String(scaled % 100)
        return "\(scaled / 100)." + (fraction.count < 2 ? "0" : "") + fraction
    }
}
