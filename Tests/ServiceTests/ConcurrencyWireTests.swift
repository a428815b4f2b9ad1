import ModerationMessages
import RPCCore
import ServerTestSupport
import StoreTestSupport
import TestSupport
import Testing

extension EndToEnd {
    /// Many clients mutating few groups at once; afterwards the action log, replayed in seq order,
    /// must explain exactly the state the API shows, with gapless seqs and the invariants intact.
    @Suite("Concurrency over the wire", .onEveryStore)
    struct ConcurrencyWireTests {
        static let users = (0..<12).map { "u\($0)" }
        static let groups = ["c0", "c1", "c2"]

        /// A server with `users` and `groups` (owned by u0, u1, u2, with a few members each).
        static func setUp() throws -> (ModerationTestServer, ModerationWireClient) {
            let server = try ModerationTestServer()
            let app = try server.client()
            for uid in users { try app.createUser(uid) }
            for (index, guid) in groups.enumerated() {
                try app.createGroup(
                    guid, owner: users[index],
                    members: [
                        (users[index + 3], .admin), (users[index + 6], .moderator), (users[index + 9], .participant),
                    ])
            }
            return (server, app)
        }

        /// The state of `guid` as the API shows it, in the model's terms.
        static func apiState(_ app: ModerationWireClient, _ guid: String) throws -> LogModel.GroupState? {
            if failure({ try app.getGroup(guid) })?.errorCode == "ERR_GROUP_NOT_FOUND" { return nil }
            let group = try app.getGroup(guid)
            let members = Dictionary(uniqueKeysWithValues: try app.allMembers(guid).map { ($0.uid, $0.scope) })
            let banned = Set(try app.allBanned(guid).map(\.uid))
            return LogModel.GroupState(owner: group.owner, members: members, banned: banned)
        }

        @Test("random concurrent mutations: the replayed log equals the final state, seqs are gapless")
        func replayEqualsState() throws {
            let (server, app) = try Self.setUp()
            defer { server.tearDown() }
            let load = WriteLoad(threads: 6, groups: Self.groups, users: Self.users, seed: 0xC0FFEE) {
                try server.connect()
            }
            load.start()
            let enough = waitUntil(timeoutMs: 30_000) { load.callCount >= 2_000 }
            try load.stop()
            #expect(enough, "only \(load.callCount) calls in 30 s")
            let acks = load.acks
            #expect(acks.count > 400, "most calls should succeed; failures: \(load.failures)")
            #expect(
                load.failures["NOT_AN_RPC_ERROR"] == nil && load.failures["ERR_INTERNAL"] == nil, "\(load.failures)")

            let head = try app.markHead(owner: "u0")
            let log = try app.replayLog(through: head)
            #expect(log.map(\.seq) == Array(1...head), "seqs strictly increasing without gaps")
            var model = LogModel()
            model.apply(log)
            #expect(model.contradictions.isEmpty, "the log contradicts itself: \(model.contradictions.prefix(5))")
            // Every change bumps its group's version: along the log, each group's versions rise.
            var versions: [String: UInt64] = [:]
            for action in log {
                let guid = action.actionFor?.guid ?? ""
                let version = action.actionFor?.version ?? 0
                #expect(
                    version > versions[guid, default: 0],
                    "seq \(action.seq) \(action.action) of \(guid) has version \(version) after \(versions[guid, default: 0])"
                )
                versions[guid] = version
            }

            // Every acknowledged action is in the log as the reply said.
            let bySeq = Dictionary(uniqueKeysWithValues: log.map { ($0.seq, $0) })
            for ack in acks {
                for (seq, kind) in ack.actions {
                    let action = bySeq[seq]
                    #expect(
                        action?.action == kind && action?.actionFor?.guid == ack.guid,
                        "\(ack): the log has \(String(describing: action?.action))")
                }
            }
            for guid in Self.groups {
                let state = try Self.apiState(app, guid)
                #expect(
                    state == model.groups[guid],
                    "\(guid): the API shows \(String(describing: state)), the log says \(String(describing: model.groups[guid]))"
                )
                let broken = WireInvariants.violations(app, guid: guid)
                #expect(broken.isEmpty, "\(broken)")
            }
            print(
                "concurrency: \(load.callCount) calls, \(acks.count) acknowledged, \(log.count) actions; failures \(load.failures.sorted { $0.key < $1.key })"
            )
        }
    }
}
