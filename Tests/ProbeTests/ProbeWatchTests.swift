import ModerationMessages
import TestSupport
import Testing

/// `rpc-probe watch` receiving the events that `rpc-probe call`s produce: the walkthrough of
/// docs/RPC-PROBE.md (users, a group, join, kick, ban), replay with --after-seq, filters,
/// compression with -v, --emit-defaults, and the ways a stream ends.
@Suite("rpc-probe watch")
struct ProbeWatchTests {
    /// alice (owner of "hiking"), bob and carol, both members.
    private func seed(_ probe: ProbeRunner) throws {
        for uid in ["alice", "bob", "carol"] {
            let created = try probe.run("call", moderation("CreateUser"), "-d", #"{"uid":"\#(uid)"}"#)
            #expect(created.exitCode == 0, "\(created)")
        }
        let group = try probe.run(
            "--as", "alice", "call", moderation("CreateGroup"), "-d",
            #"{"guid":"hiking","name":"Hiking","type":"GROUP_TYPE_PUBLIC"}"#)
        #expect(group.exitCode == 0, "\(group)")
        for uid in ["bob", "carol"] {
            let joined = try probe.run("--as", uid, "call", moderation("JoinGroup"), "-d", #"{"guid":"hiking"}"#)
            #expect(joined.exitCode == 0, "\(joined)")
        }
    }

    @Test(
        "a running watch prints, one JSON object a line, the events of calls made while it runs, then stops at --count")
    func eventsFromCalls() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        try seed(probe)
        // After seq 2: the watch replays seq 3 (carol's join), then goes live without a gap.
        let watch = try probe.start(["--as", "alice", "watch", "--group", "hiking", "--after-seq", "2", "--count", "3"])
        let first = try watch.readLine(timeoutMs: 15_000)
        #expect(try message(SubscribeResponse.self, fromJSON: first).action?.action == .joined)

        let kicked = try probe.run(
            "--as", "alice", "call", moderation("KickMember"), "-d", #"{"guid":"hiking","uid":"bob"}"#)
        #expect(kicked.exitCode == 0, "\(kicked)")
        let second = try message(SubscribeResponse.self, fromJSON: try watch.readLine(timeoutMs: 15_000))
        #expect(second.action?.action == .kicked)
        #expect(second.action?.actionOn?.uid == "bob")
        #expect(second.action?.actionBy?.uid == "alice")

        let banned = try probe.run(
            "--as", "alice", "call", moderation("BanMember"), "-d",
            #"{"guid":"hiking","uid":"carol","reason":"spam","durationMs":"60000"}"#)
        #expect(banned.exitCode == 0, "\(banned)")
        let third = try message(SubscribeResponse.self, fromJSON: try watch.readLine(timeoutMs: 15_000))
        #expect(third.action?.action == .banned)
        #expect(third.action?.reason == "spam")
        #expect(third.action?.expiresAt ?? 0 > third.action?.timestamp ?? 0)

        let end = try watch.finish(timeoutMs: 15_000)
        #expect(end.exitCode == 0, "--count 3 ends the watch cleanly: \(end)")
        #expect(end.lines.count == 3)
        #expect(end.standardError.isEmpty)
        let seqs = try end.lines.map { try message(SubscribeResponse.self, fromJSON: $0).action?.seq ?? 0 }
        #expect(seqs == [3, 4, 5], "in seq order, no gap, no duplicate")
    }

    @Test("--after-seq 0 replays the log; --kinds filters; --app follows the whole app; --group takes a list")
    func replayAndFilters() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        try seed(probe)
        let everything = try probe.run(
            "--as", "carol", "watch", "--group", "hiking", "--after-seq", "0", "--count", "3")
        #expect(everything.isCleanSuccess, "\(everything)")
        let kinds = try everything.lines.map { try message(SubscribeResponse.self, fromJSON: $0).action?.action }
        #expect(kinds == [.created, .joined, .joined])

        let joins = try probe.run("watch", "--app", "--after-seq", "0", "--kinds", "joined", "--count", "2")
        #expect(joins.isCleanSuccess, "\(joins)")
        let joiners = try joins.lines.map { try message(SubscribeResponse.self, fromJSON: $0).action?.actionBy?.uid }
        #expect(joiners == ["bob", "carol"])

        #expect(
            try probe.run(
                "--as", "alice", "call", moderation("CreateGroup"), "-d",
                #"{"guid":"chess","name":"Chess","type":"GROUP_TYPE_PUBLIC"}"#
            ).exitCode == 0)
        let both = try probe.run(
            "--as", "alice", "watch", "--group", "hiking,chess", "--after-seq", "0", "--kinds", "ACTION_TYPE_CREATED",
            "--count", "2")
        #expect(both.isCleanSuccess, "\(both)")
        let groups = try both.lines.map { try message(SubscribeResponse.self, fromJSON: $0).action?.actionFor?.guid }
        #expect(groups == ["hiking", "chess"])

        // The kinds come from the server's schema: every ActionType it has, none it has not.
        let unknown = try probe.run("watch", "--app", "--kinds", "exploded")
        #expect(unknown.exitCode == 2, "\(unknown)")
        #expect(unknown.standardError.contains("--kinds: 'exploded' is not one of created, updated"), "\(unknown)")
        #expect(unknown.standardError.contains("ownershipTransferred, muted, unmuted, frozen"), "\(unknown)")
        #expect(
            try probe.run(
                "--as", "alice", "call", moderation("FreezeGroup"), "-d", #"{"guid":"chess","reason":"tidy up"}"#
            ).exitCode == 0)
        let frozen = try probe.run(
            "--as", "alice", "watch", "--group", "chess", "--after-seq", "0", "--kinds", "frozen,userDeleted",
            "--count", "1")
        #expect(frozen.isCleanSuccess, "\(frozen)")
        let action = try #require(
            try frozen.lines.first.map { try message(SubscribeResponse.self, fromJSON: $0).action })
        #expect(action?.action == .frozen && action?.reason == "tidy up")
    }

    @Test("--compress -v: each event's bytes on the wire (deflate) vs inflated, and the totals")
    func compressedVerbose() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        try seed(probe)
        let outcome = try probe.run(
            "-v", "--as", "alice", "watch", "--group", "hiking", "--after-seq", "0", "--count", "3", "--compress")
        #expect(outcome.exitCode == 0, "\(outcome)")
        #expect(outcome.lines.count == 3)
        let events = outcome.standardError.split(separator: "\n").filter { $0.hasPrefix("event ") }
        #expect(events.count == 3, "\(outcome.standardError)")
        let lines = outcome.standardError.split(separator: "\n")
        let live = lines.firstIndex(of: "live after seq 0 (replaying 1–3 first)")
        #expect(live != nil && live! < lines.firstIndex { $0.hasPrefix("event ") }!, "\(outcome.standardError)")
        #expect(events.allSatisfy { $0.contains("bytes on the wire (deflate)") }, "\(events)")
        let total = try #require(outcome.standardError.split(separator: "\n").first { $0.hasPrefix("3 event(s): ") })
        let numbers = total.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        #expect(numbers.count == 3 && numbers[1] < numbers[2], "fewer bytes on the wire than inflated: \(total)")

        let plain = try probe.run(
            "-v", "--as", "alice", "watch", "--group", "hiking", "--after-seq", "0", "--count", "3")
        #expect(plain.lines == outcome.lines, "compression changes nothing printed on standard output")
        #expect(!plain.standardError.contains("deflate"))
        // A plain stream has one size per event: no "103 bytes on the wire, 103 inflated".
        let plainEvents = plain.standardError.split(separator: "\n").filter { $0.hasPrefix("event ") }
        #expect(plainEvents.count == 3, "\(plain.standardError)")
        for (number, line) in plainEvents.enumerated() {
            let size = try #require(line.split(separator: " ").dropFirst(2).first, "\(line)")
            #expect(line == "event \(number + 1): \(size) bytes", "\(line)")
        }
        #expect(!plain.standardError.contains("on the wire") && !plain.standardError.contains("inflated"))
        let plainTotal = try #require(plain.standardError.split(separator: "\n").first { $0.hasPrefix("3 event(s): ") })
        #expect(plainTotal.hasSuffix(" bytes") && !plainTotal.contains(","), "\(plainTotal)")
    }

    @Test("--emit-defaults prints every field of an event")
    func emitDefaults() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        try seed(probe)
        let terse = try probe.run("--as", "alice", "watch", "--group", "hiking", "--after-seq", "0", "--count", "1")
        let full = try probe.run(
            "--as", "alice", "watch", "--group", "hiking", "--after-seq", "0", "--count", "1", "--emit-defaults")
        #expect(full.isCleanSuccess, "\(full)")
        let action = try JSON(parsing: full.standardOutput)["action"]
        #expect(action["reason"].string == "")
        #expect(action["expiresAt"].string == "0")
        #expect(action["actionFor"]["tags"].array.isEmpty && action["actionFor"]["tags"].exists)
        #expect(!(try JSON(parsing: terse.standardOutput)["action"]["reason"].exists))
        #expect(
            try message(SubscribeResponse.self, fromJSON: full.standardOutput)
                == message(SubscribeResponse.self, fromJSON: terse.standardOutput))
    }

    @Test(
        "a refused subscription exits 64 + its code with the ERR_ code; a deadline ends a watch with 68 after its events"
    )
    func streamErrors() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let probe = ProbeRunner(server)
        try seed(probe)
        #expect(
            try probe.run("--as", "alice", "call", moderation("KickMember"), "-d", #"{"guid":"hiking","uid":"bob"}"#)
                .exitCode == 0)
        let notMember = try probe.run("--as", "bob", "watch", "--group", "hiking")
        #expect(notMember.exitCode == 64 + 7, "\(notMember)")
        #expect(notMember.standardError.contains("Error code: ERR_GROUP_NOT_JOINED"), "\(notMember)")
        let noGroup = try probe.run("--as", "alice", "watch", "--group", "nosuch")
        #expect(noGroup.exitCode == 64 + 5, "\(noGroup)")
        #expect(noGroup.standardError.contains("ERR_GROUP_NOT_FOUND"))
        let noTarget = try probe.run("watch")
        #expect(noTarget.exitCode == 2, "the app must name a target, and the command line says none: \(noTarget)")
        #expect(
            noTarget.standardError.contains(
                "watch: nothing to follow: give --user UID, --group GUID or --app (the whole app), "
                    + "or --as UID to follow that user"), "its own flags, not the proto's fields: \(noTarget)")
        #expect(!noTarget.standardError.contains("user_uid"), "\(noTarget)")

        let timed = try probe.run(
            "--as", "alice", "--timeout", "400ms", "watch", "--group", "hiking", "--after-seq", "0")
        #expect(timed.exitCode == 64 + 4, "\(timed)")
        #expect(timed.lines.count == 4, "every event before the deadline: \(timed)")
        #expect(timed.standardError.contains("Code: DEADLINE_EXCEEDED (4)"))
    }

    @Test("a server shutting down ends the watch with UNAVAILABLE and details.last_seq to resume from")
    func serverShutdown() throws {
        let server = try ModerationServerProcess()
        let probe = ProbeRunner(server)
        try seed(probe)
        let watch = try probe.start(["--as", "alice", "watch", "--group", "hiking", "--after-seq", "0"])
        for _ in 0..<3 { _ = try watch.readLine(timeoutMs: 15_000) }
        #expect(try server.stop() == 0)
        let end = try watch.finish(timeoutMs: 15_000)
        #expect(end.exitCode == 64 + 14, "\(end)")
        #expect(end.standardError.contains("Code: UNAVAILABLE (14)"), "\(end)")
        #expect(end.standardError.contains("Detail: last_seq=3"), "\(end)")
    }
}
