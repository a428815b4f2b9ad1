import ModerationMessages
import RPCCore
import ServerApp
import ServerTestSupport
import TestSupport
import Testing

/// A server with the cast most wire tests start from: users owner, alice, bob, carol, dave, and
/// public group "g" owned by owner with alice (admin), bob (moderator) and carol (participant);
/// dave exists but is not a member.
struct Cast {
    let server: ModerationTestServer
    let app: ModerationWireClient
    /// The seq of the last action the set-up recorded.
    let headSeq: UInt64

    static let users = ["owner", "alice", "bob", "carol", "dave"]

    init(configure: (inout ModerationServer.Tuning) -> Void = { _ in }) throws {
        server = try ModerationTestServer(configure: configure)
        app = try server.client()
        for uid in Self.users { try app.createUser(uid, name: uid.prefix(1).uppercased() + uid.dropFirst()) }
        let created = try app.createGroup(
            "g", owner: "owner", members: [("alice", .admin), ("bob", .moderator), ("carol", .participant)])
        headSeq = created.results.values.map(\.seq).max() ?? 0
    }

    /// A client acting as `uid` on the shared connection.
    func user(_ uid: String) throws -> ModerationWireClient {
        try server.client(uid)
    }

    /// Checks the invariants of `guid` through the API.
    func checkInvariants(_ guid: String = "g", sourceLocation: SourceLocation = #_sourceLocation) {
        let broken = WireInvariants.violations(app, guid: guid)
        #expect(broken.isEmpty, "\(broken)", sourceLocation: sourceLocation)
    }

    func tearDown() { server.tearDown() }
}

/// Expects `error` to be the failure SERVICE.md prescribes: the gRPC status, the `ERR_` code, and
/// a message naming `mentions`.
func expectFailure(
    _ error: RPCError?, _ status: StatusCode, _ errorCode: String, mentions: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    guard let error else {
        Issue.record("expected \(status) \(errorCode), but the call succeeded", sourceLocation: sourceLocation)
        return
    }
    #expect(
        error.code == status && error.errorCode == errorCode, "expected \(status) \(errorCode), got \(error)",
        sourceLocation: sourceLocation)
    if let mentions {
        #expect(
            error.message.contains(mentions), "message \"\(error.message)\" does not name \(mentions)",
            sourceLocation: sourceLocation)
    }
}

/// The failure of `body`, or nil when it succeeds.
func failure(_ body: () throws -> Any) -> RPCError? {
    ModerationWireClient.error(body)
}
