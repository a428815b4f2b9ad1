import TestSupport
import Testing

/// Who a call acts as, from the same header on both protocols: `x-on-behalf-of` as metadata of our
/// framed protocol (`rpc-probe -H`) and as a gRPC request header (`--grpc`) both act as that user,
/// never as the app; beside a different `--as`, the call is refused before it runs.
@Suite("x-on-behalf-of acts as the user on both protocols")
struct ProbeActingUserTests {
    /// 64 + the status code rpc-probe exits with.
    static let permissionDenied: Int32 = 64 + 7
    static let invalidArgument: Int32 = 64 + 3

    @Test("a participant named by -H x-on-behalf-of cannot kick; the app can; a different --as beside it is refused")
    func actingUser() throws {
        let server = try ModerationServerProcess()
        defer { _ = try? server.stop() }
        let framed = ProbeRunner(server)
        let grpc = try ProbeRunner.grpc(server)
        for uid in ["owner", "u2", "u3", "u4"] {
            let created = try framed.run("call", moderation("CreateUser"), "-d", #"{"uid":"\#(uid)"}"#)
            #expect(created.isCleanSuccess, "\(created)")
        }
        let group = try framed.run(
            "--as", "owner", "call", moderation("CreateGroup"), "-d",
            #"{"guid":"g","name":"G","type":"GROUP_TYPE_PUBLIC"}"#)
        #expect(group.isCleanSuccess, "\(group)")
        for uid in ["u2", "u3", "u4"] {
            let joined = try framed.run("--as", uid, "call", moderation("JoinGroup"), "-d", #"{"guid":"g"}"#)
            #expect(joined.isCleanSuccess, "\(joined)")
        }
        let kick = { (uid: String) in ["call", moderation("KickMember"), "-d", #"{"guid":"g","uid":"\#(uid)"}"#] }
        for (name, probe) in [("framed", framed), ("gRPC", grpc)] {
            let asParticipant = try probe.run(["-H", "x-on-behalf-of: u2"] + kick("u3"))
            #expect(asParticipant.exitCode == Self.permissionDenied, "\(name): \(asParticipant)")
            #expect(asParticipant.standardError.contains("ERR_PERMISSION_DENIED"), "\(name): \(asParticipant)")

            let conflicting = try probe.run(["--as", "u4", "-H", "x-on-behalf-of: u2"] + kick("u3"))
            #expect(conflicting.exitCode == Self.invalidArgument, "\(name): \(conflicting)")
        }
        // Still a member after both refusals: the app itself may kick.
        let asApp = try framed.run(kick("u3"))
        #expect(asApp.isCleanSuccess, "\(asApp)")
    }
}
