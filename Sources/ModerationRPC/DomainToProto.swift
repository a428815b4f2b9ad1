import ContentMatching
import Moderation
import ModerationMessages

/// Protobuf messages from domain values (responses and events).
enum DomainToProto {
    static func user(_ user: Moderation.User) -> ModerationMessages.User {
        ModerationMessages.User(
            uid: user.uid, name: user.name, avatar: user.avatar, metadata: user.metadata, createdAt: user.createdAt)
    }

    static func group(_ group: Moderation.Group) -> ModerationMessages.Group {
        ModerationMessages.Group(
            guid: group.guid, name: group.name, icon: group.icon, description: group.description,
            type: groupType(group.type),
            metadata: group.metadata, tags: group.tags, owner: group.owner,
            membersCount: UInt32(clamping: group.membersCount),
            version: group.version, createdAt: group.createdAt, updatedAt: group.updatedAt, frozen: group.frozen,
            frozenReason: group.frozenReason, joinRequests: group.joinRequests)
    }

    static func group(_ view: GroupView) -> ModerationMessages.Group {
        var message = group(view.group)
        message.hasJoined = view.hasJoined
        message.scope = scope(view.scope)
        message.joinedAt = view.joinedAt
        message.isBanned = view.isBanned
        return message
    }

    static func member(_ member: Member) -> GroupMember {
        GroupMember(
            uid: member.uid, name: member.name, avatar: member.avatar, scope: scope(member.scope),
            joinedAt: member.joinedAt, mutedUntil: member.mute?.mutedUntil ?? 0, muteReason: member.mute?.reason ?? "")
    }

    static func memberState(_ state: MemberState) -> GetMemberStateResponse {
        GetMemberStateResponse(
            isMember: state.isMember, scope: scope(state.scope), joinedAt: state.joinedAt, isOwner: state.isOwner,
            isBanned: state.isBanned, ban: state.ban.map(ban), groupVersion: state.groupVersion,
            mutedUntil: state.mute?.mutedUntil ?? 0, muteReason: state.mute?.reason ?? "")
    }

    static func postCheckResult(_ verdict: PostVerdict) -> PostCheckResult {
        PostCheckResult(
            allowed: verdict.allowed, errorCode: verdict.refusal?.name ?? "", mutedUntil: verdict.mutedUntil,
            shadowed: verdict.shadowed, flagged: verdict.flagged,
            matches: verdict.matches.map {
                ModerationMessages.ContentMatch(
                    ruleID: $0.ruleID, start: UInt32(clamping: $0.start), end: UInt32(clamping: $0.end))
            })
    }

    static func deleteUser(_ result: DeleteUserResult) -> DeleteUserResponse {
        DeleteUserResponse(
            groupsLeft: UInt32(clamping: result.groupsLeft), bansDropped: UInt32(clamping: result.bansDropped),
            lastSeq: result.lastSeq)
    }

    static func invite(_ invite: Moderation.Invite, guid: String) -> ModerationMessages.Invite {
        ModerationMessages.Invite(
            guid: guid, uid: invite.uid, name: invite.name, avatar: invite.avatar, scope: scope(invite.scope),
            invitedBy: invite.invitedBy, invitedAt: invite.invitedAt, expiresAt: invite.expiresAt)
    }

    static func myInvite(_ mine: MyInvite) -> ModerationMessages.Invite {
        var message = invite(mine.invite, guid: mine.group.group.guid)
        message.group = group(mine.group)
        return message
    }

    static func joinRequest(_ request: Moderation.JoinRequest) -> ModerationMessages.JoinRequest {
        ModerationMessages.JoinRequest(
            uid: request.uid, name: request.name, avatar: request.avatar, message: request.message,
            requestedAt: request.requestedAt)
    }

    static func report(_ report: Moderation.Report, guid: String) -> ModerationMessages.Report {
        let category: ReportCategory =
            switch report.category {
            case .spam: .spam
            case .harassment: .harassment
            case .hate: .hate
            case .violence: .violence
            case .other: .other
            }
        let resolution: ReportResolution =
            switch report.resolution {
            case .dismissed?: .dismissed
            case .actioned?: .actioned
            case nil: .unspecified
            }
        return ModerationMessages.Report(
            reportID: report.id, guid: guid, reporter: report.reporter, target: report.target, category: category,
            text: report.text, status: report.isOpen ? .open : .resolved, resolution: resolution, note: report.note,
            createdAt: report.createdAt, resolvedAt: report.resolvedAt, resolvedBy: report.resolvedBy)
    }

    static func ban(_ ban: Ban) -> BannedMember {
        BannedMember(
            uid: ban.uid, name: ban.name, avatar: ban.avatar, scope: scope(ban.scopeBefore), joinedAt: ban.joinedAt,
            bannedAt: ban.bannedAt, bannedBy: ban.bannedBy, reason: ban.reason, expiresAt: ban.expiresAt)
    }

    static func appBan(_ ban: Moderation.AppBan) -> ModerationMessages.AppBan {
        ModerationMessages.AppBan(
            uid: ban.uid, name: ban.name, avatar: ban.avatar, bannedAt: ban.bannedAt, bannedBy: ban.bannedBy,
            reason: ban.reason, expiresAt: ban.expiresAt, shadow: ban.shadow)
    }

    /// An action as the wire shows it: an action of the whole app has no `action_for`.
    static func action(_ record: ActionRecord) -> Action {
        Action(
            seq: record.seq, action: actionType(record.kind), actionBy: user(record.actionBy),
            actionOn: record.actionOn.map(user),
            actionFor: record.isAppWide ? nil : group(record.group), oldScope: scope(record.oldScope),
            newScope: scope(record.newScope), reason: record.reason, expiresAt: record.expiresAt,
            timestamp: record.timestamp, idempotencyKey: record.idempotencyKey, requestID: record.requestID,
            reportID: record.reportID, shadow: record.shadow, rulesAdded: UInt32(clamping: record.rulesAdded),
            rulesRemoved: UInt32(clamping: record.rulesRemoved))
    }

    static func contentRule(_ rule: Moderation.ContentRule) -> ModerationMessages.ContentRule {
        ModerationMessages.ContentRule(
            id: rule.id, guid: rule.guid, kind: contentRuleKind(rule.kind), pattern: rule.pattern,
            action: contentAction(rule.action), description: rule.description, createdAt: rule.createdAt,
            createdBy: rule.createdBy)
    }

    /// A webhook without its secret, which only CreateWebhook's response carries.
    static func webhook(_ webhook: Moderation.Webhook) -> ModerationMessages.Webhook {
        ModerationMessages.Webhook(
            id: webhook.id, url: webhook.url, kinds: webhook.kinds.map(actionType), guids: webhook.guids,
            description: webhook.description, enabled: webhook.enabled, createdAt: webhook.createdAt,
            status: ModerationMessages.WebhookStatus(
                state: webhookState(webhook.state), lastDeliveredSeq: webhook.status.lastDeliveredSeq,
                consecutiveFailures: UInt32(clamping: webhook.status.consecutiveFailures),
                lastError: webhook.status.lastError, nextAttemptAt: webhook.status.nextAttemptAt))
    }

    static func webhookState(_ state: Moderation.WebhookState) -> ModerationMessages.WebhookState {
        switch state {
        case .active: .active
        case .failing: .failing
        case .disabled: .disabled
        }
    }

    static func testWebhook(_ result: WebhookPingResult) -> TestWebhookResponse {
        TestWebhookResponse(
            httpStatus: UInt32(clamping: result.httpStatus), latencyMs: result.latencyMs, error: result.error,
            httpVersion: result.httpVersion)
    }

    static func contentRuleResult(_ outcome: ContentRuleOutcome) -> ContentRuleResult {
        ContentRuleResult(
            ok: outcome.error == nil, changed: outcome.changed, errorCode: outcome.error?.code.name ?? "",
            message: outcome.error?.message ?? "", rule: outcome.rule.map(contentRule), id: outcome.id)
    }

    static func contentRuleKind(_ kind: Moderation.ContentRuleKind) -> ModerationMessages.ContentRuleKind {
        switch kind {
        case .word: .word
        case .regex: .regex
        case .domain: .domain
        }
    }

    static func contentAction(_ action: Moderation.ContentAction) -> ModerationMessages.ContentAction {
        switch action {
        case .block: .block
        case .flag: .flag
        }
    }

    static func results(_ results: [String: Moderation.UserResult]) -> [String: ModerationMessages.UserResult] {
        results.mapValues { result in
            ModerationMessages.UserResult(
                ok: result.ok, changed: result.changed, errorCode: result.error?.code.name ?? "",
                message: result.error?.message ?? "", seq: result.seq)
        }
    }

    static func scope(_ scope: Moderation.Scope?) -> ModerationMessages.Scope {
        switch scope {
        case .admin?: .admin
        case .moderator?: .moderator
        case .participant?: .participant
        case nil: .unspecified
        }
    }

    static func groupType(_ type: Moderation.GroupType) -> ModerationMessages.GroupType {
        switch type {
        case .public: .public
        case .password: .password
        case .private: .private
        }
    }

    static func actionType(_ kind: ActionKind) -> ActionType {
        switch kind {
        case .created: .created
        case .updated: .updated
        case .deleted: .deleted
        case .joined: .joined
        case .left: .left
        case .added: .added
        case .kicked: .kicked
        case .banned: .banned
        case .unbanned: .unbanned
        case .scopeChanged: .scopeChanged
        case .ownershipTransferred: .ownershipTransferred
        case .muted: .muted
        case .unmuted: .unmuted
        case .frozen: .frozen
        case .unfrozen: .unfrozen
        case .userDeleted: .userDeleted
        case .invited: .invited
        case .inviteAccepted: .inviteAccepted
        case .inviteDeclined: .inviteDeclined
        case .inviteRevoked: .inviteRevoked
        case .joinRequested: .joinRequested
        case .joinRequestApproved: .joinRequestApproved
        case .joinRequestRejected: .joinRequestRejected
        case .joinRequestCancelled: .joinRequestCancelled
        case .reported: .reported
        case .reportResolved: .reportResolved
        case .appBanned: .appBanned
        case .appUnbanned: .appUnbanned
        case .contentRulesChanged: .contentRulesChanged
        }
    }
}
