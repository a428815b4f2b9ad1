import Moderation
import ModerationMessages

/// A response that is the action its mutation recorded (KickMember, LeaveGroup, …).
protocol ActionResponse { init(action: Action?) }

/// A response that is the action its mutation recorded and the group after it
/// (`GroupActionResult`), in whichever order its fields come.
protocol GroupActionResponse {
    init()
    var action: Action? { get set }
    var group: ModerationMessages.Group? { get set }
}

/// A response that is a result per uid (the bulk calls, InviteMembers).
protocol UserResultsResponse { init(results: [String: ModerationMessages.UserResult]) }

/// A response that is the webhook a mutation changed.
protocol WebhookResponse { init(webhook: ModerationMessages.Webhook?) }

/// A response to the lifting of a ban or a mute (`LiftResult`).
protocol LiftResponse { init(changed: Bool, action: Action?) }

/// A response that is a report and the action recorded about it (`ReportResult`).
protocol ReportResponse { init(report: ModerationMessages.Report?, action: Action?) }

extension KickMemberResponse: ActionResponse {}
extension DeleteGroupResponse: ActionResponse {}
extension LeaveGroupResponse: ActionResponse {}
extension DeclineInviteResponse: ActionResponse {}
extension RevokeInviteResponse: ActionResponse {}
extension RequestToJoinResponse: ActionResponse {}
extension CancelJoinRequestResponse: ActionResponse {}
extension UnbanUserFromAppResponse: ActionResponse {}

extension JoinGroupResponse: GroupActionResponse {}
extension AcceptInviteResponse: GroupActionResponse {}
extension TransferOwnershipResponse: GroupActionResponse {}
extension FreezeGroupResponse: GroupActionResponse {}
extension UnfreezeGroupResponse: GroupActionResponse {}
extension ApproveJoinRequestResponse: GroupActionResponse {}

extension BulkKickMembersResponse: UserResultsResponse {}
extension BulkBanMembersResponse: UserResultsResponse {}
extension BulkUnbanMembersResponse: UserResultsResponse {}
extension BulkMuteMembersResponse: UserResultsResponse {}
extension BulkUnmuteMembersResponse: UserResultsResponse {}
extension InviteMembersResponse: UserResultsResponse {}

extension UpdateWebhookResponse: WebhookResponse {}
extension DeleteWebhookResponse: WebhookResponse {}
extension ReplayWebhookResponse: WebhookResponse {}

extension UnbanMemberResponse: LiftResponse {}
extension UnmuteMemberResponse: LiftResponse {}

extension ReportMemberResponse: ReportResponse {}
extension ResolveReportResponse: ReportResponse {}

/// The responses that several methods share the shape of, each written once: a method's table
/// entry names the one its response conforms to.
extension DomainToProto {
    static func actionResponse<Response: ActionResponse>(_ action: ActionRecord) -> Response {
        Response(action: Self.action(action))
    }

    static func groupActionResponse<Response: GroupActionResponse>(_ result: GroupActionResult) -> Response {
        var response = Response()
        response.action = action(result.action)
        response.group = group(result.group)
        return response
    }

    static func resultsResponse<Response: UserResultsResponse>(_ results: [String: Moderation.UserResult])
        -> Response
    {
        Response(results: Self.results(results))
    }

    static func webhookResponse<Response: WebhookResponse>(_ webhook: Moderation.Webhook) -> Response {
        Response(webhook: Self.webhook(webhook))
    }

    static func liftResponse<Response: LiftResponse>(_ result: LiftResult) -> Response {
        Response(changed: result.changed, action: result.action.map(action))
    }

    /// The report with its group's guid, which the domain's report leaves to its action.
    static func reportResponse<Response: ReportResponse>(_ result: ReportResult) -> Response {
        Response(report: report(result.report, guid: result.action.group.guid), action: action(result.action))
    }
}
