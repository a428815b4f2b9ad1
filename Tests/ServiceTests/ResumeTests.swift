import ModerationMessages
import RPCCore
import RPCPosix
import ServerTestSupport
import StoreTestSupport
import TestSupport
import Testing

extension EndToEnd {
    /// Resuming the event stream: a subscriber that goes away mid-stream while writes go on and comes
    /// back with `after_seq` = the last seq it received gets every action exactly once, in order.
    @Suite("Resume", .onEveryStore)
    struct ResumeTests {
        enum Disconnect: String, CaseIterable, Sendable {
            /// CANCEL the stream; the connection stays.
            case cancel
            /// Close the whole connection; resume on a new one.
            case closeConnection
        }

        /// Reads a subscription in short sessions — each ends by `disconnect` after about `chunk`
        /// actions — resuming each time after the last seq received, until `done()` gives a head seq
        /// that has been reached. Returns everything received, in order, and how many sessions it took.
        static func readInSessions(
            _ server: ModerationTestServer, as uid: String?, from start: UInt64, chunk: Int, disconnect: Disconnect,
            done: () -> UInt64?
        ) throws -> (actions: [Action], sessions: Int) {
            var received: [Action] = []
            var cursor = start
            var sessions = 0
            let deadline = Clock.nowMs + 60_000
            while Clock.nowMs < deadline {
                sessions += 1
                let connection = try server.connect()
                let client = ModerationWireClient(connection: connection, actor: uid ?? "")
                let stream = client.subscribe(after: cursor)
                waitUntil(timeoutMs: 5_000, pollMs: 1) {
                    stream.actions.count >= chunk || (done().map { stream.lastSeq >= $0 || cursor >= $0 } ?? false)
                }
                switch disconnect {
                case .cancel:
                    stream.cancel()
                    // A reply on the same connection comes after any message already being handed
                    // over, so once it is here the recorder holds everything it will ever get.
                    _ = try? client.acting(as: nil).getUser("nobody")
                case .closeConnection:
                    connection.close()
                    _ = try stream.waitForEnd()
                }
                connection.close()
                let got = stream.actions
                received += got
                cursor = got.last?.seq ?? cursor
                if let head = done(), cursor >= head { break }
                if let error = stream.end ?? nil, error.code != .cancelled && error.code != .unavailable {
                    throw TestFailure("session \(sessions) ended with \(error)")
                }
            }
            return (received, sessions)
        }

        @Test(
            "disconnect mid-stream under writes, resume after the last seq: every action once, in order",
            arguments: Disconnect.allCases)
        func resumeUnderLoad(_ disconnect: Disconnect) throws {
            let (server, app) = try ConcurrencyWireTests.setUp()
            defer { server.tearDown() }
            let start = try app.markHead(owner: "u0")
            let load = WriteLoad(
                threads: 3, groups: ConcurrencyWireTests.groups, users: ConcurrencyWireTests.users, seed: 0xFEED
            ) {
                try server.connect()
            }
            load.start()
            let head = Head()
            let stopper = Background<UInt64> {
                waitUntil(timeoutMs: 30_000) { load.callCount >= 1_500 }
                try? load.stop()
                let last = (try? app.markHead(owner: "u4")) ?? 0
                head.set(last)
                return last
            }
            // Two readers at once: the whole app, and one user whose groups change under the load.
            let user = Background {
                Result {
                    try Self.readInSessions(server, as: "u4", from: start, chunk: 25, disconnect: disconnect) {
                        head.value
                    }
                }
            }
            let whole = try Self.readInSessions(server, as: nil, from: start, chunk: 60, disconnect: disconnect) {
                head.value
            }
            let last = try stopper.wait(timeoutMs: 60_000)
            let forUser = try user.wait(timeoutMs: 60_000).get()
            #expect(last > start)

            let log = try app.replayLog(through: last)
            let wantAll = log.filter { $0.seq > start }.map(\.seq)
            #expect(
                whole.actions.map(\.seq) == wantAll,
                "whole app: \(whole.actions.count) received, \(wantAll.count) in the log")
            #expect(
                whole.actions == log.filter { $0.seq > start },
                "the replayed and live actions are the log's, field for field")
            #expect(whole.sessions > 3, "the stream was resumed several times (\(whole.sessions) sessions)")

            var model = LogModel()
            var wantUser: [UInt64] = []
            for action in log {
                if action.seq > start && model.delivers(action, to: "u4") { wantUser.append(action.seq) }
                model.apply(action)
            }
            #expect(
                forUser.actions.map(\.seq) == wantUser,
                "u4: \(forUser.actions.count) received, \(wantUser.count) expected")
            print(
                "resume (\(disconnect)): \(wantAll.count) actions in \(whole.sessions) sessions (whole app), \(wantUser.count) in \(forUser.sessions) (u4)"
            )
        }
    }
}

extension EndToEnd.ResumeTests {
    @Test("a user subscription resumed from any seq of a history gets what it would have got live")
    func resumeFromEverySeq() throws {
        let cast = try Cast()
        defer { cast.tearDown() }
        let app = cast.app
        let owner = try cast.user("owner")
        let carol = try cast.user("carol")
        let dave = try cast.user("dave")
        // A history in which dave's groups change in every way, deletions and re-creations included.
        try dave.createGroup("x")
        try carol.join("x")
        try dave.join("g")
        try dave.deleteGroup("x")
        try app.createGroup("x", owner: "carol", members: [("dave", .participant)])
        try dave.leave("x")
        try carol.updateGroup(UpdateGroupRequest(guid: "x", name: "X"))
        try owner.deleteGroup("g")
        try app.createGroup("g", owner: "owner")
        try owner.updateGroup(UpdateGroupRequest(guid: "g", name: "G again"))
        try dave.join("g")
        try owner.kick("g", "dave")
        try owner.ban("g", "dave")
        try owner.unban("g", "dave")
        try app.addMembers("x", [("dave", .moderator)])
        try carol.changeScope("x", "dave", to: .participant)
        try carol.transfer("x", to: "dave")
        try app.updateGroup(UpdateGroupRequest(guid: "g", name: "G"))
        let head = try owner.deleteGroup("g").seq

        let log = try app.replayLog(through: head)
        var model = LogModel()
        var delivered: [UInt64] = []
        for action in log {
            if model.delivers(action, to: "dave") { delivered.append(action.seq) }
            model.apply(action)
        }
        #expect(model.contradictions.isEmpty, "\(model.contradictions)")
        for start in 0..<head {
            let want = delivered.filter { $0 > start }
            let stream = dave.subscribe(after: start)
            defer { stream.cancel() }
            if let last = want.last { #expect(stream.waitForSeq(last), "after \(start): got \(stream.seqs)") }
            #expect(stream.seqs == want, "resumed after \(start): got \(stream.seqs), expected \(want)")
        }
    }
}

/// A seq set once by one thread and read by others.
final class Head: Sendable {
    private let seq = Collector<UInt64>()

    func set(_ value: UInt64) { seq.append(value) }

    var value: UInt64? { seq.items.last }
}
