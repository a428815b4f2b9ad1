import Moderation
import StoreTestSupport
import TestSupport
import Testing

/// The whole permission matrix of docs/SERVICE.md: every action × every standing of
/// the actor × every standing of the target, on a public and a private group, asserting the exact
/// error code.
///
/// The expected tables below are written out by hand from the specifications' permission
/// matrices and the fixed order of checks (1 arguments, 2 group visible, 3 actor member, 4 actor
/// scope, 5 target exists, 6 not self, 7 owner protections, 8 target state, 9 rank, 10 no-op) —
/// not derived from the implementation. Codes: OK success, NF GROUP_NOT_FOUND, NJ
/// GROUP_NOT_JOINED, PD PERMISSION_DENIED, SELF GROUP_NO_SELF_ACTION, CKO/CBO/CCO/CMO
/// CANNOT_KICK/BAN/CHANGE/MUTE_OWNER(_SCOPE), NAM NOT_A_MEMBER, UNB USER_NOT_BANNED, UNM
/// USER_NOT_MUTED, AB ALREADY_BANNED, AJ ALREADY_JOINED, BAN BANNED_GROUPMEMBER, JNA
/// GROUP_JOIN_NOT_ALLOWED, OCL OWNER_CANNOT_LEAVE, SS SAME_SCOPE, IA INVALID_ARGUMENT, UOG
/// USER_OWNS_GROUPS, INF INVITE_NOT_FOUND, JRD JOIN_REQUESTS_DISABLED, JRNF JOIN_REQUEST_NOT_FOUND,
/// RAR REPORT_ALREADY_RESOLVED, UBA USER_BANNED_FROM_APP;
/// "-" means the cell does not apply (the app has no
/// self).
///
/// The roster's participants banned from the app (docs/SERVICE.md) add two actors and two targets
/// beyond the tables' seven: a user banned from the app gets UBA for every call (after its
/// arguments, all valid here), but deletes themselves; a shadow-banned one gets a participant's
/// outcomes exactly. As targets both are participants to every action of others — CheckPost
/// excepted, whose verdict for a user banned from the app is UBA where a participant's is OK. The
/// calls of the app-wide bans have their own tables (`appBanMatrix`).
///
/// Some actions start from a prepared state (`prepare`): `unmute` from the target muted by the
/// app wherever the app can mute it, `unfreeze` from the group frozen, `acceptInvite` and
/// `declineInvite` from the actor invited by the app, the revokes from the target invited by the
/// app (as a participant, or as a moderator) — wherever the app can invite them: a non-member
/// who is not banned; the join request calls (but `requestToJoinOff`) from the group taking
/// requests, `cancelJoinRequest` from the actor's request and the approve/reject from the
/// target's — wherever they can file one: a non-member who is not banned. CheckPost's cells are the
/// call's error or, when the call succeeds, the verdict's refusal (OK: allowed).
@Suite("Permission matrix", .onEveryStore)
struct PermissionMatrixTests {
    enum Action: String, CaseIterable, Sendable {
        // Actions without a target.
        case getGroup, updateGroup, updateTypeAndPassword, deleteGroup, join, leave, listMembers, listBanned,
            listActions, freeze, unfreeze, acceptInvite, declineInvite, listInvites, listMyInvites
        case requestToJoin, requestToJoinOff, cancelJoinRequest, listJoinRequests, listReports, resolveReport
        case addContentRules, deleteContentRules, listContentRules, addAppContentRules, listAppContentRules
        // Actions on a target user.
        case addParticipant, addModerator, addAdmin, kick, ban, unban
        case scopeToAdmin, scopeToModerator, scopeToParticipant, transfer, memberState
        case mute, unmute, checkPost
        case inviteParticipant, inviteModerator, inviteAdmin, revokeInvite, revokeModeratorInvite
        case approveJoinRequest, rejectJoinRequest, reportMember

        var hasTarget: Bool { Self.targeted.contains(self) }
        static let targeted: [Action] = [
            .addParticipant, .addModerator, .addAdmin, .kick, .ban, .unban, .scopeToAdmin, .scopeToModerator,
            .scopeToParticipant, .transfer, .memberState, .mute, .unmute, .checkPost, .inviteParticipant,
            .inviteModerator, .inviteAdmin, .revokeInvite, .revokeModeratorInvite, .approveJoinRequest,
            .rejectJoinRequest, .reportMember,
        ]
    }

    static let codes: [String: ErrorCode?] = [
        "OK": nil, "NF": .groupNotFound, "NJ": .groupNotJoined, "PD": .permissionDenied, "SELF": .groupNoSelfAction,
        "CKO": .cannotKickOwner, "CBO": .cannotBanOwner, "CCO": .cannotChangeOwnerScope, "NAM": .notAMember,
        "UNB": .userNotBanned, "AB": .alreadyBanned, "AJ": .alreadyJoined, "BAN": .bannedGroupMember,
        "JNA": .groupJoinNotAllowed, "OCL": .ownerCannotLeave, "SS": .sameScope, "IA": .invalidArgument,
        "CMO": .cannotMuteOwner, "UNM": .userNotMuted, "UOG": .userOwnsGroups, "INF": .inviteNotFound,
        "JRD": .joinRequestsDisabled, "JRNF": .joinRequestNotFound,
        "RAR": .reportAlreadyResolved, "UBA": .userBannedFromApp,
    ]

    // MARK: Expected outcomes on a public group

    /// Actions without a target; columns: owner admin moderator participant nonMember banned app.
    static let publicUntargeted: [Action: String] = [
        .getGroup: "OK OK OK OK OK BAN OK",
        .updateGroup: "OK OK OK PD NJ NJ OK",
        .updateTypeAndPassword: "OK OK PD PD NJ NJ OK",
        .deleteGroup: "OK PD PD PD NJ NJ OK",
        .join: "AJ AJ AJ AJ OK BAN IA",
        .leave: "OCL OK OK OK NJ NJ IA",
        .listMembers: "OK OK OK OK NJ NJ OK",
        .listBanned: "OK OK OK PD NJ NJ OK",
        .listActions: "OK OK OK OK OK OK OK",
        .freeze: "OK OK PD PD NJ NJ OK",
        .unfreeze: "OK OK PD PD NJ NJ OK",
        // Only a non-member who is not banned can hold an invite; a member is told so first.
        .acceptInvite: "AJ AJ AJ AJ OK BAN IA",
        .declineInvite: "AJ AJ AJ AJ OK BAN IA",
        .listInvites: "OK OK OK PD NJ NJ OK",
        .listMyInvites: "OK OK OK OK OK OK IA",
        // Requests off: refused before anything about the user (a member included).
        .requestToJoin: "AJ AJ AJ AJ OK BAN IA",
        .requestToJoinOff: "JRD JRD JRD JRD JRD JRD IA",
        .cancelJoinRequest: "JRNF JRNF JRNF JRNF OK JRNF IA",
        .listJoinRequests: "OK OK OK PD NJ NJ OK",
        // Reports: resolving starts from an open report (by p2 about a2) the test files first.
        .listReports: "OK OK OK PD NJ NJ OK",
        .resolveReport: "OK OK OK PD NJ NJ OK",
        // A group's content rules are its owner's and admins' (and the app's); its moderators
        // read them. The app's own set is the app's alone, whatever the group.
        .addContentRules: "OK OK PD PD NJ NJ OK",
        .deleteContentRules: "OK OK PD PD NJ NJ OK",
        .listContentRules: "OK OK OK PD NJ NJ OK",
        .addAppContentRules: "PD PD PD PD PD PD OK",
        .listAppContentRules: "PD PD PD PD PD PD OK",
    ]

    /// Actions on a target; one row per actor (owner admin moderator participant nonMember banned
    /// app), columns per target: owner admin moderator participant nonMember banned self.
    static let publicTargeted: [Action: [String]] = [
        .addParticipant: [
            "AJ AJ AJ AJ OK BAN AJ", "AJ AJ AJ AJ OK BAN AJ", "AJ AJ AJ AJ OK BAN AJ", "PD PD PD PD PD PD PD",
            "NJ NJ NJ NJ NJ NJ NJ", "NJ NJ NJ NJ NJ NJ NJ", "AJ AJ AJ AJ OK BAN -",
        ],
        .addModerator: [
            "AJ AJ AJ AJ OK BAN AJ", "AJ AJ AJ AJ OK BAN AJ", "AJ AJ AJ AJ PD BAN AJ", "PD PD PD PD PD PD PD",
            "NJ NJ NJ NJ NJ NJ NJ", "NJ NJ NJ NJ NJ NJ NJ", "AJ AJ AJ AJ OK BAN -",
        ],
        .addAdmin: [
            "AJ AJ AJ AJ OK BAN AJ", "AJ AJ AJ AJ PD BAN AJ", "AJ AJ AJ AJ PD BAN AJ", "PD PD PD PD PD PD PD",
            "NJ NJ NJ NJ NJ NJ NJ", "NJ NJ NJ NJ NJ NJ NJ", "AJ AJ AJ AJ OK BAN -",
        ],
        .kick: [
            "SELF OK OK OK NAM NAM SELF", "CKO PD OK OK NAM NAM SELF", "CKO PD PD OK NAM NAM SELF",
            "PD PD PD PD PD PD PD",
            "NJ NJ NJ NJ NJ NJ NJ", "NJ NJ NJ NJ NJ NJ NJ", "CKO OK OK OK NAM NAM -",
        ],
        .ban: [
            "SELF OK OK OK OK AB SELF", "CBO PD OK OK OK AB SELF", "CBO PD PD OK OK AB SELF", "PD PD PD PD PD PD PD",
            "NJ NJ NJ NJ NJ NJ NJ", "NJ NJ NJ NJ NJ NJ NJ", "CBO OK OK OK OK AB -",
        ],
        .unban: [
            "SELF UNB UNB UNB UNB OK SELF", "UNB UNB UNB UNB UNB OK SELF", "UNB UNB UNB UNB UNB OK SELF",
            "PD PD PD PD PD PD PD", "NJ NJ NJ NJ NJ NJ NJ", "NJ NJ NJ NJ NJ NJ NJ", "UNB UNB UNB UNB UNB OK -",
        ],
        .scopeToAdmin: [
            "SELF SS OK OK NAM NAM SELF", "CCO PD PD PD NAM NAM SELF", "PD PD PD PD PD PD PD", "PD PD PD PD PD PD PD",
            "NJ NJ NJ NJ NJ NJ NJ", "NJ NJ NJ NJ NJ NJ NJ", "CCO SS OK OK NAM NAM -",
        ],
        .scopeToModerator: [
            "SELF OK SS OK NAM NAM SELF", "CCO PD SS OK NAM NAM SELF", "PD PD PD PD PD PD PD", "PD PD PD PD PD PD PD",
            "NJ NJ NJ NJ NJ NJ NJ", "NJ NJ NJ NJ NJ NJ NJ", "CCO OK SS OK NAM NAM -",
        ],
        .scopeToParticipant: [
            "SELF OK OK SS NAM NAM SELF", "CCO PD OK SS NAM NAM SELF", "PD PD PD PD PD PD PD", "PD PD PD PD PD PD PD",
            "NJ NJ NJ NJ NJ NJ NJ", "NJ NJ NJ NJ NJ NJ NJ", "CCO OK OK SS NAM NAM -",
        ],
        .transfer: [
            "SELF OK OK OK NAM NAM SELF", "PD PD PD PD PD PD PD", "PD PD PD PD PD PD PD", "PD PD PD PD PD PD PD",
            "NJ NJ NJ NJ NJ NJ NJ", "NJ NJ NJ NJ NJ NJ NJ", "SELF OK OK OK NAM NAM -",
        ],
        .memberState: [
            "OK OK OK OK OK OK OK", "OK OK OK OK OK OK OK", "OK OK OK OK OK OK OK", "PD PD PD PD PD PD OK",
            "NJ NJ NJ NJ NJ NJ OK", "NJ NJ NJ NJ NJ NJ OK", "OK OK OK OK OK OK -",
        ],
        .mute: [
            "SELF OK OK OK NAM NAM SELF", "CMO PD OK OK NAM NAM SELF", "CMO PD PD OK NAM NAM SELF",
            "PD PD PD PD PD PD PD", "NJ NJ NJ NJ NJ NJ NJ", "NJ NJ NJ NJ NJ NJ NJ", "CMO OK OK OK NAM NAM -",
        ],
        // The owner is never muted, so unmuting them is "not muted" (step 8) before the rank.
        .unmute: [
            "SELF OK OK OK NAM NAM SELF", "UNM PD OK OK NAM NAM SELF", "UNM PD PD OK NAM NAM SELF",
            "PD PD PD PD PD PD PD", "NJ NJ NJ NJ NJ NJ NJ", "NJ NJ NJ NJ NJ NJ NJ", "UNM OK OK OK NAM NAM -",
        ],
        // Invites follow AddMembers' scope rules and per-user results exactly.
        .inviteParticipant: [
            "AJ AJ AJ AJ OK BAN AJ", "AJ AJ AJ AJ OK BAN AJ", "AJ AJ AJ AJ OK BAN AJ", "PD PD PD PD PD PD PD",
            "NJ NJ NJ NJ NJ NJ NJ", "NJ NJ NJ NJ NJ NJ NJ", "AJ AJ AJ AJ OK BAN -",
        ],
        .inviteModerator: [
            "AJ AJ AJ AJ OK BAN AJ", "AJ AJ AJ AJ OK BAN AJ", "AJ AJ AJ AJ PD BAN AJ", "PD PD PD PD PD PD PD",
            "NJ NJ NJ NJ NJ NJ NJ", "NJ NJ NJ NJ NJ NJ NJ", "AJ AJ AJ AJ OK BAN -",
        ],
        .inviteAdmin: [
            "AJ AJ AJ AJ OK BAN AJ", "AJ AJ AJ AJ PD BAN AJ", "AJ AJ AJ AJ PD BAN AJ", "PD PD PD PD PD PD PD",
            "NJ NJ NJ NJ NJ NJ NJ", "NJ NJ NJ NJ NJ NJ NJ", "AJ AJ AJ AJ OK BAN -",
        ],
        // Only the non-member holds the prepared invite; everyone else has none (step 8).
        .revokeInvite: [
            "INF INF INF INF OK INF INF", "INF INF INF INF OK INF INF", "INF INF INF INF OK INF INF",
            "PD PD PD PD PD PD PD", "NJ NJ NJ NJ NJ NJ NJ", "NJ NJ NJ NJ NJ NJ NJ", "INF INF INF INF OK INF -",
        ],
        // A moderator revokes only invites with scope participant (step 9).
        .revokeModeratorInvite: [
            "INF INF INF INF OK INF INF", "INF INF INF INF OK INF INF", "INF INF INF INF PD INF INF",
            "PD PD PD PD PD PD PD", "NJ NJ NJ NJ NJ NJ NJ", "NJ NJ NJ NJ NJ NJ NJ", "INF INF INF INF OK INF -",
        ],
        // Only the non-member holds the prepared request; a member is told so, a banned user too.
        .approveJoinRequest: [
            "AJ AJ AJ AJ OK BAN AJ", "AJ AJ AJ AJ OK BAN AJ", "AJ AJ AJ AJ OK BAN AJ", "PD PD PD PD PD PD PD",
            "NJ NJ NJ NJ NJ NJ NJ", "NJ NJ NJ NJ NJ NJ NJ", "AJ AJ AJ AJ OK BAN -",
        ],
        .rejectJoinRequest: [
            "JRNF JRNF JRNF JRNF OK JRNF JRNF", "JRNF JRNF JRNF JRNF OK JRNF JRNF", "JRNF JRNF JRNF JRNF OK JRNF JRNF",
            "PD PD PD PD PD PD PD", "NJ NJ NJ NJ NJ NJ NJ", "NJ NJ NJ NJ NJ NJ NJ", "JRNF JRNF JRNF JRNF OK JRNF -",
        ],
        // Any member reports another member; the app has no one to report as.
        .reportMember: [
            "SELF OK OK OK NAM NAM SELF", "OK OK OK OK NAM NAM SELF", "OK OK OK OK NAM NAM SELF",
            "OK OK OK OK NAM NAM SELF", "NJ NJ NJ NJ NJ NJ NJ", "NJ NJ NJ NJ NJ NJ NJ", "IA IA IA IA IA IA -",
        ],
        // A user asks only about itself (else the call is refused); the app about anyone.
        .checkPost: [
            "OK PD PD PD PD PD OK", "PD PD PD PD PD PD OK", "PD PD PD PD PD PD OK", "PD PD PD PD PD PD OK",
            "PD PD PD PD PD PD NJ", "PD PD PD PD PD PD BAN", "OK OK OK OK NJ BAN -",
        ],
    ]

    // MARK: Expected outcomes on a private group: only the rows of users who are not members
    // differ (step 2: a private group does not exist for them). The join row wins over
    // visibility, a banned user is told so on GetGroup for any type, and a user who was the
    // target of an action may read those actions.

    static let privateUntargeted: [Action: String] = [
        .getGroup: "OK OK OK OK NF BAN OK",
        .updateGroup: "OK OK OK PD NF NF OK",
        .updateTypeAndPassword: "OK OK PD PD NF NF OK",
        .deleteGroup: "OK PD PD PD NF NF OK",
        .join: "AJ AJ AJ AJ JNA BAN IA",
        .leave: "OCL OK OK OK NF NF IA",
        .listMembers: "OK OK OK OK NF NF OK",
        .listBanned: "OK OK OK PD NF NF OK",
        .listActions: "OK OK OK OK NF OK OK",
        .freeze: "OK OK PD PD NF NF OK",
        .unfreeze: "OK OK PD PD NF NF OK",
        // The invited non-member sees the private group.
        .acceptInvite: "AJ AJ AJ AJ OK BAN IA",
        .declineInvite: "AJ AJ AJ AJ OK BAN IA",
        .listInvites: "OK OK OK PD NF NF OK",
        .listMyInvites: "OK OK OK OK OK OK IA",
        // A private group with requests off does not exist for a non-member; one with requests
        // on takes them; a pending request shows it to its requester.
        .requestToJoin: "AJ AJ AJ AJ OK BAN IA",
        .requestToJoinOff: "JRD JRD JRD JRD NF NF IA",
        .cancelJoinRequest: "JRNF JRNF JRNF JRNF OK NF IA",
        .listJoinRequests: "OK OK OK PD NF NF OK",
        .listReports: "OK OK OK PD NF NF OK",
        .resolveReport: "OK OK OK PD NF NF OK",
        .addContentRules: "OK OK PD PD NF NF OK",
        .deleteContentRules: "OK OK PD PD NF NF OK",
        .listContentRules: "OK OK OK PD NF NF OK",
        .addAppContentRules: "PD PD PD PD PD PD OK",
        .listAppContentRules: "PD PD PD PD PD PD OK",
    ]

    static let privateOutsiderRow = "NF NF NF NF NF NF NF"

    /// CheckPost on a private group: the call's refusals are the same, and the verdict says a
    /// private group a user is not in does not exist (a banned user is told they are banned).
    static let privateCheckPost = [
        "OK PD PD PD PD PD OK", "PD PD PD PD PD PD OK", "PD PD PD PD PD PD OK", "PD PD PD PD PD PD OK",
        "PD PD PD PD PD PD NF", "PD PD PD PD PD PD BAN", "OK OK OK OK NF BAN -",
    ]

    static func expected(_ action: Action, _ type: GroupType, _ actor: Roster.Actor, _ target: Roster.Target?) -> String
    {
        switch (actor, target) {
        case (.appBanned, _):
            return "UBA"
        case (.shadowBanned, _):
            return expected(action, type, .participant, target)
        case (_, .appBanned?):
            let code = expected(action, type, actor, .participant)
            return action == .checkPost && code == "OK" ? "UBA" : code
        case (_, .shadowBanned?):
            return expected(action, type, actor, .participant)
        default:
            break
        }
        let actorIndex = Roster.Actor.allCases.firstIndex(of: actor)!
        guard let target else {
            let row = (type == .private ? privateUntargeted : publicUntargeted)[action]!
            return row.split(separator: " ").map(String.init)[actorIndex]
        }
        var row = publicTargeted[action]![actorIndex]
        if type == .private && action == .checkPost {
            row = privateCheckPost[actorIndex]
        } else if type == .private && (actor == .nonMember || actor == .banned) {
            row = privateOutsiderRow
        }
        return row.split(separator: " ").map(String.init)[Roster.Target.allCases.firstIndex(of: target)!]
    }

    // MARK: The test

    @Test(
        "every actor and target standing gets the exact code", arguments: Action.allCases, [GroupType.public, .private])
    func matrix(_ action: Action, _ type: GroupType) throws {
        let harness = try ServiceHarness()
        defer { harness.tearDown() }
        try Roster.createUsers(harness)
        var cell = 0
        for actor in Roster.Actor.allCases {
            for target in action.hasTarget ? Roster.Target.allCases.map(Optional.some) : [nil] {
                let expectedCode = Self.expected(action, type, actor, target)
                if expectedCode == "-" { continue }
                cell += 1
                let guid = "g\(cell)"
                try Roster.createGroup(harness, guid: guid, type: type)
                Self.prepare(
                    action, on: guid, by: harness.client(), actor: actor.uid, target: target?.uid(for: actor))
                let outcome = Self.perform(
                    action, on: guid, by: harness.client(actor.uid), target: target?.uid(for: actor))
                let expected = try #require(Self.codes[expectedCode], "unknown code \(expectedCode)")
                #expect(
                    outcome == expected,
                    "\(action) on a \(type) group by \(actor) on \(target.map(\.description) ?? "-"): got \(outcome?.name ?? "OK"), expected \(expected?.name ?? "OK")"
                )
                let broken = Invariants.violations(
                    service: harness.service, store: harness.store, app: "app", guid: guid)
                #expect(broken.isEmpty, "\(action) by \(actor): \(broken)")
            }
        }
    }

    /// Puts the group in the state `action` starts from: for `unmute` the target muted by the app
    /// (where the app may mute it: not the owner, not a non-member), for `unfreeze` the group
    /// frozen, for the invite answers the actor invited, for the revokes the target invited.
    static func prepare(_ action: Action, on guid: String, by app: ModerationClient, actor: String?, target: String?) {
        switch action {
        case .unmute:
            if let target { _ = try? app.mute(guid, target, reason: "prepared") }
        case .unfreeze:
            _ = try? app.freeze(guid, reason: "prepared")
        case .acceptInvite, .declineInvite:
            if let actor { _ = try? app.invite(guid, actor) }
        case .revokeInvite:
            if let target { _ = try? app.invite(guid, target) }
        case .revokeModeratorInvite:
            if let target { _ = try? app.invite(guid, target, scope: .moderator) }
        case .resolveReport:
            _ = try? app.acting(as: "p2").report(guid, "a2")
        case .deleteContentRules:
            _ = try? app.addContentRule(guid, .word, "prepared")
        case .requestToJoin, .listJoinRequests:
            _ = try? app.setJoinRequests(guid, true)
        case .cancelJoinRequest:
            _ = try? app.setJoinRequests(guid, true)
            if let actor { _ = try? app.acting(as: actor).requestToJoin(guid) }
        case .approveJoinRequest, .rejectJoinRequest:
            _ = try? app.setJoinRequests(guid, true)
            if let target { _ = try? app.acting(as: target).requestToJoin(guid) }
        default:
            break
        }
    }

    /// Runs `action`; the error code it fails with (for AddMembers, the target's result; for
    /// CheckPost, the verdict's refusal), or nil.
    static func perform(_ action: Action, on guid: String, by client: ModerationClient, target: String?) -> ErrorCode? {
        let uid = target ?? ""
        func invite(_ scope: Scope) -> ErrorCode? {
            do {
                let result = try client.invite(guid, [MemberGrant(uid: uid, scope: scope)])
                return result[uid]?.error?.code
            } catch {
                return error.code
            }
        }
        func add(_ scope: Scope) -> ErrorCode? {
            do {
                let result = try client.addMembers(guid, [MemberGrant(uid: uid, scope: scope)])
                return result.results[uid]?.error?.code
            } catch {
                return error.code
            }
        }
        switch action {
        case .getGroup: return ModerationClient.code { try client.getGroup(guid) }
        case .updateGroup:
            return ModerationClient.code { try client.updateGroup(GroupUpdate(guid: guid, name: "Renamed")) }
        case .updateTypeAndPassword:
            return ModerationClient.code {
                try client.updateGroup(GroupUpdate(guid: guid, type: .password, password: "new-pass"))
            }
        case .deleteGroup: return ModerationClient.code { try client.deleteGroup(guid) }
        case .join: return ModerationClient.code { try client.join(guid) }
        case .leave: return ModerationClient.code { try client.leave(guid) }
        case .listMembers: return ModerationClient.code { try client.listMembers(guid) }
        case .listBanned: return ModerationClient.code { try client.listBanned(guid) }
        case .listActions: return ModerationClient.code { try client.actions(guid) }
        case .addParticipant: return add(.participant)
        case .addModerator: return add(.moderator)
        case .addAdmin: return add(.admin)
        case .kick: return ModerationClient.code { try client.kick(guid, uid) }
        case .ban: return ModerationClient.code { try client.ban(guid, uid) }
        case .unban: return ModerationClient.code { try client.unban(guid, uid) }
        case .scopeToAdmin: return ModerationClient.code { try client.changeScope(guid, uid, to: .admin) }
        case .scopeToModerator: return ModerationClient.code { try client.changeScope(guid, uid, to: .moderator) }
        case .scopeToParticipant: return ModerationClient.code { try client.changeScope(guid, uid, to: .participant) }
        case .transfer: return ModerationClient.code { try client.transfer(guid, to: uid) }
        case .memberState: return ModerationClient.code { try client.memberState(guid, uid) }
        case .freeze: return ModerationClient.code { try client.freeze(guid, reason: "matrix") }
        case .unfreeze: return ModerationClient.code { try client.unfreeze(guid) }
        case .mute: return ModerationClient.code { try client.mute(guid, uid, reason: "matrix") }
        case .unmute: return ModerationClient.code { try client.unmute(guid, uid) }
        case .acceptInvite: return ModerationClient.code { try client.acceptInvite(guid) }
        case .declineInvite: return ModerationClient.code { try client.declineInvite(guid) }
        case .listInvites: return ModerationClient.code { try client.listInvites(guid) }
        case .listMyInvites: return ModerationClient.code { try client.listMyInvites() }
        case .inviteParticipant: return invite(.participant)
        case .inviteModerator: return invite(.moderator)
        case .inviteAdmin: return invite(.admin)
        case .revokeInvite, .revokeModeratorInvite: return ModerationClient.code { try client.revokeInvite(guid, uid) }
        case .reportMember: return ModerationClient.code { try client.report(guid, uid, text: "matrix") }
        case .listReports: return ModerationClient.code { try client.listReports(guid) }
        case .addContentRules: return ModerationClient.code { try client.addContentRule(guid, .word, "matrix") }
        case .deleteContentRules:
            return ModerationClient.code {
                let rules = try client.service.listContentRules(Caller(app: "app"), guid: guid)
                let id = try #require(rules.items.first?.id)
                let result = try client.deleteContentRules(guid, [id])
                if let error = result.outcomes[0].error { throw error }
            }
        case .listContentRules: return ModerationClient.code { try client.listContentRules(guid) }
        case .addAppContentRules: return ModerationClient.code { try client.addContentRule("", .word, "matrix") }
        case .listAppContentRules: return ModerationClient.code { try client.listContentRules("") }
        case .resolveReport:
            do {
                let open = try client.service.listReports(Caller(app: "app"), guid: guid, open: true)
                let id = try #require(open.page.items.first?.id)
                _ = try client.resolveReport(guid, id, .dismissed)
                return nil
            } catch let error as ModerationError {
                return error.code
            } catch {
                return .internal
            }
        case .requestToJoin, .requestToJoinOff: return ModerationClient.code { try client.requestToJoin(guid) }
        case .cancelJoinRequest: return ModerationClient.code { try client.cancelJoinRequest(guid) }
        case .listJoinRequests: return ModerationClient.code { try client.listJoinRequests(guid) }
        case .approveJoinRequest: return ModerationClient.code { try client.approveJoinRequest(guid, uid) }
        case .rejectJoinRequest: return ModerationClient.code { try client.rejectJoinRequest(guid, uid) }
        case .checkPost:
            do {
                return try client.checkPost(guid, uid).refusal
            } catch {
                return error.code
            }
        }
    }

    // MARK: DeleteUser

    /// DeleteUser by each actor on each target of the roster; columns as above. A user deletes
    /// only themselves, the app anyone; an owner of a group is refused until ownership moves. The
    /// users banned from the app: the last two rows and columns (a banned user deletes themselves
    /// only — any other deletion is refused for the ban first —, a shadow-banned one as a
    /// participant; as targets, both are participants).
    static let deleteUser: [String] = [
        "UOG PD PD PD PD PD UOG PD PD", "PD PD PD PD PD PD OK PD PD", "PD PD PD PD PD PD OK PD PD",
        "PD PD PD PD PD PD OK PD PD", "PD PD PD PD PD PD OK PD PD", "PD PD PD PD PD PD OK PD PD",
        "UOG OK OK OK OK OK - OK OK", "UBA UBA UBA UBA UBA UBA OK UBA UBA", "PD PD PD PD PD PD OK PD PD",
    ]

    @Test("DeleteUser: every actor on every target gets the exact code; a deleted uid is gone for good")
    func deleteUserMatrix() throws {
        let harness = try ServiceHarness()
        defer { harness.tearDown() }
        var cell = 0
        for (actorIndex, actor) in Roster.Actor.allCases.enumerated() {
            for (targetIndex, target) in Roster.Target.allCases.enumerated() {
                let expectedCode = Self.deleteUser[actorIndex].split(separator: " ").map(String.init)[targetIndex]
                guard expectedCode != "-", let uid = target.uid(for: actor) else { continue }
                cell += 1
                // A fresh app per cell: a deletion is app-wide, and the roster's uids are fixed.
                let app = "delete-\(cell)"
                try Roster.createUsers(harness, app: app)
                try Roster.createGroup(harness, guid: "g", type: .public, app: app)
                let client = harness.client(actor.uid, app: app)
                let outcome = ModerationClient.code { try client.deleteUser(uid) }
                let expected = try #require(Self.codes[expectedCode], "unknown code \(expectedCode)")
                #expect(
                    outcome == expected,
                    "deleteUser by \(actor) of \(target): got \(outcome?.name ?? "OK"), expected \(expected?.name ?? "OK")"
                )
                let admin = harness.client(app: app)
                if outcome == nil {
                    #expect(ModerationClient.code { try admin.getUser(uid) } == .uidNotFound)
                    #expect(ModerationClient.code { try admin.createUser(uid) } == .uidAlreadyExists)
                    #expect(ModerationClient.code { try admin.memberState("g", uid) } == .uidNotFound)
                } else {
                    #expect(try admin.getUser(uid).uid == uid, "a refused deletion changed nothing")
                }
                let broken = Invariants.violations(store: harness.store, app: app, guid: "g")
                #expect(broken.isEmpty, "deleteUser by \(actor) of \(target): \(broken)")
            }
        }
    }

    // MARK: The app-wide bans

    /// The calls of the app-wide bans (docs/SERVICE.md), by each actor (rows: owner admin moderator
    /// participant nonMember banned app appBanned shadowBanned) on each target (columns: owner
    /// admin moderator participant nonMember banned self appBanned shadowBanned). Only the app
    /// may make them, on anyone but a user banned from the app already; a user banned from the app
    /// is refused for that first. `unbanFromApp` starts from the target banned from the app by the
    /// app (wherever it is not already).
    enum AppBanAction: String, CaseIterable, Sendable {
        case banFromApp, shadowBanFromApp, unbanFromApp, listAppBans
    }

    static let usersRow = "PD PD PD PD PD PD PD PD PD"
    static let appBanTables: [AppBanAction: [String]] = [
        .banFromApp: [
            usersRow, usersRow, usersRow, usersRow, usersRow, usersRow, "OK OK OK OK OK OK - AB AB", repeated("UBA"),
            usersRow,
        ],
        .shadowBanFromApp: [
            usersRow, usersRow, usersRow, usersRow, usersRow, usersRow, "OK OK OK OK OK OK - AB AB", repeated("UBA"),
            usersRow,
        ],
        .unbanFromApp: [
            usersRow, usersRow, usersRow, usersRow, usersRow, usersRow, "OK OK OK OK OK OK - OK OK", repeated("UBA"),
            usersRow,
        ],
        // No target: one cell per actor, the same in every column.
        .listAppBans: [
            usersRow, usersRow, usersRow, usersRow, usersRow, usersRow, repeated("OK"), repeated("UBA"), usersRow,
        ],
    ]

    static func repeated(_ code: String) -> String {
        Array(repeating: code, count: Roster.Target.allCases.count).joined(separator: " ")
    }

    @Test("the app-wide bans: only the app, and a banned user is refused first", arguments: AppBanAction.allCases)
    func appBanMatrix(_ action: AppBanAction) throws {
        let harness = try ServiceHarness()
        defer { harness.tearDown() }
        var cell = 0
        for (actorIndex, actor) in Roster.Actor.allCases.enumerated() {
            let targets = action == .listAppBans ? [Roster.Target.participant] : Roster.Target.allCases
            for target in targets {
                let targetIndex = Roster.Target.allCases.firstIndex(of: target)!
                let row = try #require(Self.appBanTables[action])[actorIndex]
                let expectedCode = row.split(separator: " ").map(String.init)[targetIndex]
                guard expectedCode != "-", let uid = target.uid(for: actor) else { continue }
                cell += 1
                // A fresh app per cell: a ban from the app is app-wide.
                let app = "bans-\(cell)"
                try Roster.createUsers(harness, app: app)
                try Roster.createGroup(harness, guid: "g", type: .public, app: app)
                let admin = harness.client(app: app)
                if action == .unbanFromApp, target != .appBanned, target != .shadowBanned, actor.uid != uid {
                    try admin.banFromApp(uid, reason: "prepared")
                }
                let client = harness.client(actor.uid, app: app)
                let outcome = ModerationClient.code { () throws -> Any in
                    switch action {
                    case .banFromApp: try client.banFromApp(uid, reason: "matrix")
                    case .shadowBanFromApp: try client.banFromApp(uid, reason: "matrix", shadow: true)
                    case .unbanFromApp: try client.unbanFromApp(uid)
                    case .listAppBans: try client.listAppBans()
                    }
                }
                let expected = try #require(Self.codes[expectedCode], "unknown code \(expectedCode)")
                #expect(
                    outcome == expected,
                    "\(action) by \(actor) of \(target): got \(outcome?.name ?? "OK"), expected \(expected?.name ?? "OK")"
                )
                let banned = Set(try admin.listAppBans(ListBannedOptions(limit: 100)).items.map(\.uid))
                switch (action, outcome) {
                case (.banFromApp, nil), (.shadowBanFromApp, nil): #expect(banned.contains(uid))
                case (.unbanFromApp, nil): #expect(!banned.contains(uid))
                default: break
                }
                let broken = Invariants.violations(store: harness.store, app: app, guid: "g")
                #expect(broken.isEmpty, "\(action) by \(actor) of \(target): \(broken)")
            }
        }
    }

    // MARK: Webhooks

    /// The webhook calls (docs/SERVICE.md), by each actor (owner admin moderator participant
    /// nonMember banned app appBanned shadowBanned): the app only; a user banned from the app is
    /// refused for that first. The calls taking an id name a webhook the app made.
    enum WebhookAction: String, CaseIterable, Sendable {
        case createWebhook, updateWebhook, deleteWebhook, listWebhooks, replayWebhook, testWebhook
    }

    static let webhookRow = "PD PD PD PD PD PD OK UBA PD"

    @Test("the webhooks: only the app, and a banned user is refused first", arguments: WebhookAction.allCases)
    func webhookMatrix(_ action: WebhookAction) throws {
        let harness = try ServiceHarness()
        defer { harness.tearDown() }
        let expectedCodes = Self.webhookRow.split(separator: " ").map(String.init)
        for (actorIndex, actor) in Roster.Actor.allCases.enumerated() {
            // A fresh app per actor: an app has at most 10 webhooks.
            let app = "hooks-\(actorIndex)"
            try Roster.createUsers(harness, app: app)
            try Roster.createGroup(harness, guid: "g", type: .public, app: app)
            let id = try Self.createWebhook(harness.client(app: app)).webhook.id
            let client = harness.client(actor.uid, app: app)
            let service = client.service
            let caller = client.caller
            let outcome = ModerationClient.code { () throws -> Any in
                switch action {
                case .createWebhook: try Self.createWebhook(client)
                case .updateWebhook:
                    try MutationWaiter.wait {
                        service.updateWebhook(
                            caller, id: id, WebhookUpdate(description: "matrix"), replay: MutationWaiter.describe,
                            completion: $0)
                    }.get()
                case .deleteWebhook:
                    try MutationWaiter.wait {
                        service.deleteWebhook(caller, id: id, replay: MutationWaiter.describe, completion: $0)
                    }.get()
                case .listWebhooks: try service.listWebhooks(caller)
                case .replayWebhook:
                    try MutationWaiter.wait {
                        service.replayWebhook(
                            caller, id: id, afterSeq: 0, replay: MutationWaiter.describe, completion: $0)
                    }.get()
                case .testWebhook: try service.webhookToTest(caller, id: id)
                }
            }
            let expected = try #require(Self.codes[expectedCodes[actorIndex]], "unknown code")
            #expect(
                outcome == expected,
                "\(action) by \(actor): got \(outcome?.name ?? "OK"), expected \(expected?.name ?? "OK")")
        }
    }

    @discardableResult
    static func createWebhook(_ client: ModerationClient) throws(ModerationError) -> CreatedWebhook {
        let service = client.service
        let caller = client.caller
        return try MutationWaiter.wait {
            service.createWebhook(
                caller, NewWebhook(url: "https://hooks.example/matrix"), replay: MutationWaiter.describe,
                completion: $0)
        }.get()
    }
}
