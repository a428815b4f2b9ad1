import Moderation
import ModerationEvents
import ModerationSQLite
import StoreTestSupport
import TestSupport
import Testing
import ThreadSupport

/// Every error code of docs/SERVICE.md provoked on purpose (ERR_UNAUTHENTICATED and
/// ERR_RATE_LIMITED belong to the RPC layer; ERR_TOO_MANY_SUBSCRIPTIONS comes from an event hub
/// over the same service; ERR_STORE_UNAVAILABLE from a store on a server, which
/// ModerationPostgresTests stop; ERR_MEMBER_MUTED, ERR_GROUP_FROZEN and ERR_CONTENT_BLOCKED are
/// CheckPost verdicts, never a call's failure: CheckPostTests and ContentRuleTests have them;
/// ERR_CONTENT_RULE_NOT_FOUND is one id's result of DeleteContentRules: ContentRuleTests), each
/// with a message that names the uid, guid or app involved.
@Suite("Error codes", .onEveryStore)
struct ErrorCodeTests {
    static let provoked = ErrorCode.allCases.filter {
        $0 != .unauthenticated && $0 != .rateLimited && $0 != .storeUnavailable && $0 != .memberMuted
            && $0 != .groupFrozen && $0 != .contentBlocked && $0 != .contentRuleNotFound
    }

    @Test("the 46 codes have their wire names and gRPC statuses")
    func names() {
        #expect(ErrorCode.allCases.count == 46)
        #expect(Set(ErrorCode.allCases.map(\.name)).count == 46)
        #expect(ErrorCode.allCases.allSatisfy { $0.name.hasPrefix("ERR_") })
        #expect(ErrorCode.groupNotFound.grpcStatus == 5)
        #expect(ErrorCode.versionConflict.grpcStatus == 10)
        #expect(ErrorCode.cursorExpired.grpcStatus == 11)
        #expect(ErrorCode.internal.grpcStatus == 13)
        #expect(ErrorCode.storeUnavailable.grpcStatus == 14)
    }

    @Test("provoked on purpose", arguments: provoked)
    func provoke(_ code: ErrorCode) throws {
        let clock = ManualWallClock()
        let harness = try ServiceHarness(clock: clock)
        defer { harness.tearDown() }
        let app = harness.client()
        for uid in ["owner", "admin", "mod", "part", "outsider"] { try app.createUser(uid) }
        try app.createGroup(
            "g", owner: "owner",
            members: [
                MemberGrant(uid: "admin", scope: .admin), MemberGrant(uid: "mod", scope: .moderator),
                MemberGrant(uid: "part"),
            ])
        try app.createGroup("pw", type: .password, password: "secret", owner: "owner")
        try app.createGroup("priv", type: .private, owner: "owner")
        let owner = harness.client("owner")
        let part = harness.client("part")
        let outsider = harness.client("outsider")

        let (error, mentions) = Self.failure(
            of: code, harness: harness, clock: clock, app: app, owner: owner, part: part, outsider: outsider)
        let failure = try #require(error, "\(code) was not provoked")
        #expect(failure.code == code)
        #expect(failure.message.contains(mentions), "message \"\(failure.message)\" does not name \(mentions)")
    }

    /// The error of a call made to fail with `code`, and what its message must name.
    static func failure(
        of code: ErrorCode, harness: ServiceHarness, clock: ManualWallClock, app: ModerationClient,
        owner: ModerationClient,
        part: ModerationClient, outsider: ModerationClient
    ) -> (ModerationError?, String) {
        func error(_ body: () throws -> Any) -> ModerationError? {
            do {
                _ = try body()
                return nil
            } catch {
                return error as? ModerationError
            }
        }
        switch code {
        case .groupNotFound: return (error { try owner.getGroup("missing") }, "missing")
        case .uidNotFound: return (error { try owner.kick("g", "ghost") }, "ghost")
        case .groupNotJoined: return (error { try outsider.listMembers("g") }, "g")
        case .notAMember: return (error { try owner.kick("g", "outsider") }, "outsider")
        case .permissionDenied: return (error { try part.kick("g", "mod") }, "g")
        case .cannotKickOwner: return (error { try harness.client("admin").kick("g", "owner") }, "owner")
        case .cannotBanOwner: return (error { try harness.client("admin").ban("g", "owner") }, "owner")
        case .userNotBanned: return (error { try owner.unban("g", "part") }, "part")
        case .cannotChangeOwnerScope: return (error { try app.changeScope("g", "owner", to: .moderator) }, "owner")
        case .alreadyJoined: return (error { try part.join("g") }, "part")
        case .alreadyBanned:
            _ = try? owner.ban("g", "outsider")
            return (error { try owner.ban("g", "outsider") }, "outsider")
        case .bannedGroupMember:
            _ = try? owner.ban("g", "outsider")
            return (error { try outsider.join("g") }, "outsider")
        case .groupJoinNotAllowed: return (error { try outsider.join("priv") }, "priv")
        case .wrongGroupPass: return (error { try outsider.join("pw", password: "guess") }, "pw")
        case .emptyGroupPass: return (error { try outsider.join("pw") }, "pw")
        case .ownerCannotLeave: return (error { try owner.leave("g") }, "owner")
        case .sameScope: return (error { try owner.changeScope("g", "mod", to: .moderator) }, "mod")
        case .groupNoSelfAction: return (error { try owner.kick("g", "owner") }, "owner")
        case .guidAlreadyExists: return (error { try app.createGroup("g", owner: "owner") }, "g")
        case .uidAlreadyExists: return (error { try app.createUser("part") }, "part")
        case .invalidArgument: return (error { try owner.kick("g", "Not Valid!") }, "uid")
        case .versionConflict:
            return (error { try owner.updateGroup(GroupUpdate(guid: "g", name: "x", ifVersion: 999)) }, "g")
        case .cursorExpired:
            // Age the log past the retention, prune it, then ask for a seq that is gone.
            clock.advance(by: harness.configuration.actionRetentionMs + 1000)
            _ = try? owner.kick("g", "part")
            let done = BlockingSemaphore()
            harness.service.runMaintenance { _ in done.signal() }
            done.wait()
            return (error { try owner.actions("g", ListActionsOptions(afterSeq: 1)) }, "g")
        case .tooManySubscriptions:
            // An event hub over the service that lets an app have one subscription open.
            let hub = EventHub(service: harness.service, encode: { _ in [] }, maxSubscriptionsPerApp: 1)
            defer { hub.shutdown() }
            let request = SubscriptionRequest(caller: app.caller, target: .app)
            _ = error { try hub.subscribe(request, sink: EventRegistryTests.AcceptingSink()) }
            return (error { try hub.subscribe(request, sink: EventRegistryTests.AcceptingSink()) }, "app app")
        case .cannotMuteOwner: return (error { try harness.client("admin").mute("g", "owner") }, "owner")
        case .alreadyMuted:
            _ = try? owner.mute("g", "part")
            return (error { try owner.mute("g", "part") }, "part")
        case .userNotMuted: return (error { try owner.unmute("g", "part") }, "part")
        case .alreadyFrozen:
            _ = try? owner.freeze("g")
            return (error { try owner.freeze("g") }, "g")
        case .groupNotFrozen: return (error { try owner.unfreeze("g") }, "g")
        case .userOwnsGroups: return (error { try owner.deleteUser("owner") }, "g")
        case .inviteNotFound: return (error { try owner.revokeInvite("g", "outsider") }, "outsider")
        case .joinRequestsDisabled: return (error { try outsider.requestToJoin("g") }, "g")
        case .alreadyRequested:
            _ = try? owner.setJoinRequests("g", true)
            _ = try? outsider.requestToJoin("g")
            return (error { try outsider.requestToJoin("g") }, "outsider")
        case .joinRequestNotFound: return (error { try owner.approveJoinRequest("g", "outsider") }, "outsider")
        case .alreadyReported:
            _ = try? part.report("g", "owner")
            return (error { try part.report("g", "owner") }, "owner")
        case .reportAlreadyResolved:
            let id = (try? part.report("g", "owner"))?.report.id ?? 0
            _ = try? owner.resolveReport("g", id, .dismissed)
            return (error { try owner.resolveReport("g", id, .actioned) }, "\(id)")
        case .userBannedFromApp:
            _ = try? app.banFromApp("outsider")
            return (error { try outsider.getUser("owner") }, "outsider")
        case .webhookNotFound:
            return (error { try app.service.webhookToTest(app.caller, id: "wh_missing") }, "wh_missing")
        case .internal:
            harness.store.close()
            // No invariant check: the store is closed.
            let unchecked = ModerationClient(service: harness.service, caller: owner.caller)
            return (error { try unchecked.kick("g", "part") }, "closed")
        default:
            return (nil, "")
        }
    }
}
