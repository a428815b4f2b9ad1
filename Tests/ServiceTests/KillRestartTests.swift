internal import Glibc
import ModerationMessages
import RPCCore
import RPCPosix
import StoreTestSupport
import TestSupport
import Testing

extension EndToEnd {
    /// The real `moderation-server` executable killed with SIGKILL in the middle of a write load,
    /// then restarted on the same data directory: every mutation that was acknowledged is there, the
    /// log is gapless and explains the state, and the invariants hold. Three kills in a row (more with
    /// `SERVICE_TESTS_KILLS`).
    @Suite("Durability under SIGKILL", .onEveryStore)
    struct KillRestartTests {
        static let users = (0..<16).map { "d\($0)" }
        static let groups = ["k0", "k1", "k2", "k3"]
        /// Kills per run: 3, or `SERVICE_TESTS_KILLS` from the environment (a hardening run may ask
        /// for more).
        static let kills: Int = getenv("SERVICE_TESTS_KILLS").flatMap { Int(String(cString: $0)) } ?? 3

        @Test("acknowledged mutations survive SIGKILL of the server, several kills in a row")
        func killAndRestart() throws {
            let directory = TemporaryDirectory(prefix: "moderation-kill")
            defer { directory.remove() }
            var arguments = [
                "--data-dir", directory.path + "/data", "--api-key", "\(TestApp.one.rawValue):\(TestApp.one.apiKey)",
                "--log-level", "warning",
            ]
            // On PostgreSQL the killed server's data is its schema, which the restarted one opens.
            var postgres: (url: String, schema: String)?
            if case .postgres(let url) = TestBackend.current {
                postgres = (url, PostgresCluster.uniqueSchema("kill"))
                arguments += ["--store", "postgres", "--postgres-url", url, "--postgres-schema", postgres!.schema]
            }
            defer { if let postgres { PostgresCluster.dropSchema(postgres.schema, url: postgres.url) } }
            let logPath = directory.path + "/server.log"
            @Sendable func connect(_ port: UInt16) throws -> ClientConnection {
                var options = ClientOptions(port: port, apiKey: TestApp.one.apiKey)
                options.clientName = "durability-test"
                return try ClientConnection.connect(options)
            }

            var server = try ServerProcess(arguments: arguments, logPath: logPath)
            var connection = try connect(server.port)
            var app = ModerationWireClient(connection: connection, actor: "")
            for uid in Self.users { try app.createUser(uid) }
            for (index, guid) in Self.groups.enumerated() {
                try app.createGroup(
                    guid, owner: Self.users[index],
                    members: [(Self.users[index + 4], .admin), (Self.users[index + 8], .participant)])
            }
            var acknowledged: [WriteLoad.Ack] = []
            for round in 1...Self.kills {
                let port = server.port
                let load = WriteLoad(
                    threads: 4, groups: Self.groups, users: Self.users, seed: UInt64(round) * 7919, creates: true
                ) {
                    try connect(port)
                }
                load.start()
                let loaded = waitUntil(timeoutMs: 30_000) { load.acks.count >= 250 }
                let status = try server.kill(SIGKILL)
                #expect(loaded, "round \(round): only \(load.acks.count) acknowledged writes before the kill")
                #expect(
                    status & 0x7F == SIGKILL,
                    "round \(round): the server ended with wait status \(status), not by SIGKILL")
                #expect(
                    waitUntil(timeoutMs: 15_000) { load.isFinished }, "the load's calls fail once the server is gone")
                try load.stop()
                acknowledged += load.acks
                connection.close()

                server = try ServerProcess(arguments: arguments, logPath: logPath)
                connection = try connect(server.port)
                app = ModerationWireClient(connection: connection, actor: "")
                let report = try Self.check(app, acknowledged: acknowledged)
                print(
                    "durability round \(round): \(load.callCount) calls, \(load.acks.count) acknowledged before SIGKILL; after restart \(report)"
                )
            }
            connection.close()
            try server.kill(SIGTERM)
        }

        /// Checks the restarted server against everything acknowledged so far; returns a summary.
        static func check(_ app: ModerationWireClient, acknowledged: [WriteLoad.Ack]) throws -> String {
            let head = try app.markHead(owner: users[0])
            let log = try app.replayLog(through: head)
            #expect(log.map(\.seq) == Array(1...head), "the log is gapless after the restart")
            var model = LogModel()
            model.apply(log)
            #expect(model.contradictions.isEmpty, "\(model.contradictions.prefix(5))")
            // Each group's own log, as the app reads it with ListGroupActions, is its part of the
            // whole log; acknowledged actions are looked up there.
            var bySeq: [UInt64: Action] = [:]
            for guid in model.groups.keys {
                let actions = try app.allActions(guid)
                #expect(
                    actions == log.filter { $0.actionFor?.guid == guid },
                    "\(guid): ListGroupActions disagrees with the whole log")
                for action in actions { bySeq[action.seq] = action }
            }
            var checked = 0
            for ack in acknowledged {
                for (seq, kind) in ack.actions {
                    let action = bySeq[seq]
                    #expect(
                        action?.action == kind && action?.actionFor?.guid == ack.guid
                            && action?.actionOn?.uid == ack.uid,
                        "acknowledged \(ack) is missing: the log has \(String(describing: action?.action)) at \(seq)")
                    checked += 1
                }
                switch ack.operation {
                case "createUser":
                    #expect(failure { try app.getUser(ack.uid) } == nil, "acknowledged user \(ack.uid) is missing")
                case "createGroup":
                    #expect(
                        log.contains { $0.action == .created && $0.actionFor?.guid == ack.guid },
                        "acknowledged group \(ack.guid) has no created action")
                    #expect(model.groups[ack.guid] != nil, "acknowledged group \(ack.guid) is missing")
                default:
                    break
                }
            }
            var groups = 0
            for (guid, state) in model.groups {
                let broken = WireInvariants.violations(app, guid: guid)
                #expect(broken.isEmpty, "\(broken)")
                let members = Dictionary(uniqueKeysWithValues: try app.allMembers(guid).map { ($0.uid, $0.scope) })
                let banned = Set(try app.allBanned(guid).map(\.uid))
                #expect(members == state.members && banned == state.banned, "\(guid): the state does not match its log")
                groups += 1
            }
            return "\(log.count) actions, \(checked) acknowledged actions found, \(groups) groups consistent"
        }
    }
}
