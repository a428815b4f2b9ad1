import Moderation
import StoreTestSupport
import Synchronization
import TestSupport
import Testing

/// The action log: one action per affected user, gapless seqs per app, group snapshots after the
/// change, and the commit listener seeing exactly what the log holds.
@Suite("Action log", .onEveryStore)
struct ActionLogTests {
    final class Recorder: Sendable {
        let batches = Mutex<[[ActionRecord]]>([])
        func record(_ actions: [ActionRecord]) { batches.withLock { $0.append(actions) } }
        var all: [ActionRecord] { batches.withLock { $0.flatMap { $0 } } }
    }

    @Test func fieldsOfEveryKind() throws {
        let harness = try ServiceHarness()
        defer { harness.tearDown() }
        let recorder = Recorder()
        harness.service.addCommitListener(recorder.record)
        let app = harness.client()
        for uid in ["o", "a", "b", "c"] { try app.createUser(uid, name: "Name \(uid)") }
        let withRequest = ModerationClient(
            service: harness.service, caller: Caller(app: "app", actor: "o", requestID: "req-42"))
        try withRequest.createGroup("g", members: [MemberGrant(uid: "a", scope: .admin)])
        try harness.client("b").join("g")
        try harness.client("o").updateGroup(GroupUpdate(guid: "g", description: "new"))
        try harness.client("a").changeScope("g", "b", to: .moderator)
        try harness.client("a").kick("g", "b")
        try harness.client("a").ban("g", "c", reason: "spam", durationMs: 5_000)
        try harness.client("a").unban("g", "c")
        try harness.client("o").transfer("g", to: "a")
        try harness.client("o").leave("g")
        try harness.client("a").deleteGroup("g")

        let log = try harness.service.withActionLog(app: "app") { (log: ActionLogSnapshot) throws(ModerationError) in
            try log.actions(afterSeq: 0, limit: 100)
        }
        #expect(
            log.map(\.kind) == [
                .created, .added, .joined, .updated, .scopeChanged, .kicked, .banned, .unbanned, .ownershipTransferred,
                .left, .deleted,
            ])
        #expect(log.map(\.seq) == Array(1...11))
        #expect(log.map { $0.actionOn?.uid } == ["o", "a", "b", nil, "b", "b", "c", "c", "a", "o", nil])
        #expect(log.map(\.actionBy.uid) == ["o", "o", "b", "o", "a", "a", "a", "a", "o", "o", "a"])
        #expect(log.map(\.group.membersCount) == [1, 2, 3, 3, 3, 2, 2, 2, 2, 1, 1])
        #expect(
            log.map(\.group.version) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10],
            "one bump per change; deleted shows the group as it was")
        #expect(log[0].newScope == .admin && log[1].newScope == .admin && log[2].newScope == .participant)
        #expect(log[4].oldScope == .participant && log[4].newScope == .moderator && log[5].oldScope == .moderator)
        #expect(log[6].reason == "spam" && log[6].expiresAt == log[6].timestamp + 5_000 && log[6].oldScope == nil)
        #expect(log[8].oldScope == .admin && log[8].newScope == .admin && log[8].group.owner == "a")
        #expect(log[9].oldScope == .admin)
        #expect(log[3].group.description == "new" && log[2].group.description == "")
        #expect(log[0].requestID == "req-42" && log[0].actionBy.name == "Name o")
        #expect(log.allSatisfy { $0.app == "app" && $0.group.guid == "g" })
        #expect(recorder.all == log, "the listener saw exactly the log, in seq order")
        #expect(recorder.batches.withLock { $0.allSatisfy { !$0.isEmpty } })
    }

    @Test func snapshotForTheEventStream() throws {
        let harness = try ServiceHarness()
        defer { harness.tearDown() }
        let app = harness.client()
        for uid in ["o", "p"] { try app.createUser(uid) }
        try app.createGroup("g1", owner: "o", members: [MemberGrant(uid: "p", scope: .moderator)])
        try app.createGroup("g2", owner: "o")
        try app.createGroup("g3", owner: "p")
        let view = try harness.service.withActionLog(app: "app") { (log: ActionLogSnapshot) throws(ModerationError) in
            (
                try log.headSeq(), try log.oldestRetainedSeq(), try log.groups(of: "p"),
                try log.scope(of: "p", inGroup: "g1"),
                try log.scope(of: "p", inGroup: "g2"),
                try log.actions(afterSeq: 2, limit: 2, kinds: [.created]).map(\.seq)
            )
        }
        #expect(view.0 == 4 && view.1 == 1)
        #expect(view.2 == ["g1", "g3"] && view.3 == .moderator && view.4 == nil)
        #expect(view.5 == [3, 4])
    }
}
