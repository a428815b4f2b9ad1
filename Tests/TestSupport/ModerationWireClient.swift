public import ModerationMessages
public import ProtoBridge
public import RPCCore
public import RPCPosix

/// One user (or the app) talking to the moderation server over a real connection: every RPC of
/// `moderation.v1` as a one-line call that waits for its reply and throws its `RPCError`.
///
/// Clients are cheap values; many share one `ClientConnection` (each call carries its own
/// `on_behalf_of`). Every call has a deadline, so a server that never answers fails the test.
public struct ModerationWireClient: Sendable {
    public let connection: ClientConnection
    /// The acting user's uid; empty for the app.
    public let actor: String
    /// The options every call is made with (the acting user, deadline, idempotency key).
    public var options: CallOptions

    public init(connection: ClientConnection, actor: String, timeoutMs: UInt32 = 15_000) {
        self.connection = connection
        self.actor = actor
        options = CallOptions(timeoutMs: timeoutMs, onBehalfOf: actor)
    }

    /// The same client with an idempotency key on its calls.
    public func withKey(_ key: String) -> ModerationWireClient {
        var copy = self
        copy.options.idempotencyKey = key
        return copy
    }

    /// The same connection acting as `uid` (nil: the app).
    public func acting(as uid: String?) -> ModerationWireClient {
        var copy = ModerationWireClient(connection: connection, actor: uid ?? "")
        copy.options.timeoutMs = options.timeoutMs
        return copy
    }

    /// Makes a typed call with this client's options.
    public func call<Request, Response>(_ method: ProtoMethod<Request, Response>, _ request: Request) throws(RPCError)
        -> Response
    {
        try connection.unary(method, request, options: options)
    }

    /// Makes a call with an encoded body; returns the encoded response body exactly as received.
    public func rawCall<Request, Response>(_ method: ProtoMethod<Request, Response>, _ request: Request)
        throws(RPCError) -> [UInt8]
    {
        try connection.call(path: method.path, body: request.serializedBytes(), options: options)
    }

    /// The `RPCError` `body` fails with, or nil when it succeeds (an error of another type
    /// becomes UNKNOWN with its description).
    public static func error(_ body: () throws -> Any) -> RPCError? {
        do {
            _ = try body()
            return nil
        } catch let error as RPCError {
            return error
        } catch {
            return RPCError(code: .unknown, errorCode: "NOT_AN_RPC_ERROR", message: "\(error)")
        }
    }

    // MARK: Users

    @discardableResult
    public func createUser(_ uid: String, name: String? = nil, avatar: String = "") throws(RPCError) -> User {
        try call(ModerationMethods.createUser, CreateUserRequest(uid: uid, name: name ?? "User \(uid)", avatar: avatar))
            .user ?? User()
    }

    public func getUser(_ uid: String) throws(RPCError) -> User {
        try call(ModerationMethods.getUser, GetUserRequest(uid: uid)).user ?? User()
    }

    @discardableResult
    public func deleteUser(_ uid: String) throws(RPCError) -> DeleteUserResponse {
        try call(ModerationMethods.deleteUser, DeleteUserRequest(uid: uid))
    }

    // MARK: Groups

    @discardableResult
    public func createGroup(
        _ guid: String, type: GroupType = .public, password: String = "", owner: String = "",
        members: [(String, Scope)] = [], bans: [String] = [], name: String? = nil
    ) throws(RPCError) -> CreateGroupResponse {
        try call(
            ModerationMethods.createGroup,
            CreateGroupRequest(
                guid: guid, name: name ?? "Group \(guid)", type: type, password: password, owner: owner,
                members: members.map { MemberToAdd(uid: $0.0, scope: $0.1) }, bannedUids: bans))
    }

    public func getGroup(_ guid: String) throws(RPCError) -> Group {
        try call(ModerationMethods.getGroup, GetGroupRequest(guid: guid)).group ?? Group()
    }

    @discardableResult
    public func updateGroup(_ request: UpdateGroupRequest) throws(RPCError) -> Group {
        try call(ModerationMethods.updateGroup, request).group ?? Group()
    }

    @discardableResult
    public func deleteGroup(_ guid: String) throws(RPCError) -> Action {
        try call(ModerationMethods.deleteGroup, DeleteGroupRequest(guid: guid)).action ?? Action()
    }

    // MARK: Membership

    @discardableResult
    public func join(_ guid: String, password: String = "") throws(RPCError) -> JoinGroupResponse {
        try call(ModerationMethods.joinGroup, JoinGroupRequest(guid: guid, password: password))
    }

    @discardableResult
    public func leave(_ guid: String) throws(RPCError) -> Action {
        try call(ModerationMethods.leaveGroup, LeaveGroupRequest(guid: guid)).action ?? Action()
    }

    public func members(
        _ guid: String, limit: UInt32 = 0, cursor: String = "", scopes: [Scope] = [], search: String = "",
        mutedOnly: Bool = false
    ) throws(RPCError) -> ListMembersResponse {
        try call(
            ModerationMethods.listMembers,
            ListMembersRequest(
                guid: guid, limit: limit, cursor: cursor, scopes: scopes, search: search, mutedOnly: mutedOnly))
    }

    /// Every member (or every member muted now), page by page (100 a page).
    public func allMembers(_ guid: String, mutedOnly: Bool = false) throws(RPCError) -> [GroupMember] {
        var all: [GroupMember] = []
        var cursor = ""
        repeat {
            let page = try members(guid, limit: 100, cursor: cursor, mutedOnly: mutedOnly)
            all += page.members
            cursor = page.nextCursor
        } while !cursor.isEmpty
        return all
    }

    @discardableResult
    public func addMembers(_ guid: String, _ members: [(String, Scope)]) throws(RPCError) -> AddMembersResponse {
        try call(
            ModerationMethods.addMembers,
            AddMembersRequest(guid: guid, members: members.map { MemberToAdd(uid: $0.0, scope: $0.1) }))
    }

    public func memberState(_ guid: String, _ uid: String = "") throws(RPCError) -> GetMemberStateResponse {
        try call(ModerationMethods.getMemberState, GetMemberStateRequest(guid: guid, uid: uid))
    }

    // MARK: Moderation

    @discardableResult
    public func kick(_ guid: String, _ uid: String) throws(RPCError) -> Action {
        try call(ModerationMethods.kickMember, KickMemberRequest(guid: guid, uid: uid)).action ?? Action()
    }

    @discardableResult
    public func ban(
        _ guid: String, _ uid: String, reason: String = "", durationMs: Int64 = 0, ifNotBanned: Bool = false
    ) throws(RPCError) -> BanMemberResponse {
        try call(
            ModerationMethods.banMember,
            BanMemberRequest(guid: guid, uid: uid, reason: reason, durationMs: durationMs, ifNotBanned: ifNotBanned))
    }

    @discardableResult
    public func unban(_ guid: String, _ uid: String, onlyIfBanned: Bool = false) throws(RPCError) -> UnbanMemberResponse
    {
        try call(ModerationMethods.unbanMember, UnbanMemberRequest(guid: guid, uid: uid, onlyIfBanned: onlyIfBanned))
    }

    public func banned(_ guid: String, limit: UInt32 = 0, cursor: String = "", search: String = "") throws(RPCError)
        -> ListBannedMembersResponse
    {
        try call(
            ModerationMethods.listBannedMembers,
            ListBannedMembersRequest(guid: guid, limit: limit, cursor: cursor, search: search))
    }

    /// Every banned member, page by page (100 a page).
    public func allBanned(_ guid: String) throws(RPCError) -> [BannedMember] {
        var all: [BannedMember] = []
        var cursor = ""
        repeat {
            let page = try banned(guid, limit: 100, cursor: cursor)
            all += page.bannedMembers
            cursor = page.nextCursor
        } while !cursor.isEmpty
        return all
    }

    @discardableResult
    public func changeScope(_ guid: String, _ uid: String, to scope: Scope) throws(RPCError)
        -> ChangeMemberScopeResponse
    {
        try call(ModerationMethods.changeMemberScope, ChangeMemberScopeRequest(guid: guid, uid: uid, scope: scope))
    }

    @discardableResult
    public func transfer(_ guid: String, to uid: String) throws(RPCError) -> TransferOwnershipResponse {
        try call(ModerationMethods.transferOwnership, TransferOwnershipRequest(guid: guid, uid: uid))
    }

    @discardableResult
    public func bulkKick(_ guid: String, _ uids: [String]) throws(RPCError) -> [String: UserResult] {
        try call(ModerationMethods.bulkKickMembers, BulkKickMembersRequest(guid: guid, uids: uids)).results
    }

    @discardableResult
    public func bulkBan(_ guid: String, _ uids: [String], reason: String = "") throws(RPCError) -> [String: UserResult]
    {
        try call(ModerationMethods.bulkBanMembers, BulkBanMembersRequest(guid: guid, uids: uids, reason: reason))
            .results
    }

    @discardableResult
    public func bulkUnban(_ guid: String, _ uids: [String]) throws(RPCError) -> [String: UserResult] {
        try call(ModerationMethods.bulkUnbanMembers, BulkUnbanMembersRequest(guid: guid, uids: uids)).results
    }

    // MARK: Mutes, freezes, posting

    @discardableResult
    public func mute(
        _ guid: String, _ uid: String, reason: String = "", durationMs: Int64 = 0, ifNotMuted: Bool = false
    ) throws(RPCError) -> MuteMemberResponse {
        try call(
            ModerationMethods.muteMember,
            MuteMemberRequest(guid: guid, uid: uid, reason: reason, durationMs: durationMs, ifNotMuted: ifNotMuted))
    }

    @discardableResult
    public func unmute(_ guid: String, _ uid: String, onlyIfMuted: Bool = false) throws(RPCError)
        -> UnmuteMemberResponse
    {
        try call(ModerationMethods.unmuteMember, UnmuteMemberRequest(guid: guid, uid: uid, onlyIfMuted: onlyIfMuted))
    }

    @discardableResult
    public func bulkMute(_ guid: String, _ uids: [String], reason: String = "", durationMs: Int64 = 0)
        throws(RPCError) -> [String: UserResult]
    {
        try call(
            ModerationMethods.bulkMuteMembers,
            BulkMuteMembersRequest(guid: guid, uids: uids, reason: reason, durationMs: durationMs)
        ).results
    }

    @discardableResult
    public func bulkUnmute(_ guid: String, _ uids: [String]) throws(RPCError) -> [String: UserResult] {
        try call(ModerationMethods.bulkUnmuteMembers, BulkUnmuteMembersRequest(guid: guid, uids: uids)).results
    }

    @discardableResult
    public func freeze(_ guid: String, reason: String = "") throws(RPCError) -> FreezeGroupResponse {
        try call(ModerationMethods.freezeGroup, FreezeGroupRequest(guid: guid, reason: reason))
    }

    @discardableResult
    public func unfreeze(_ guid: String) throws(RPCError) -> UnfreezeGroupResponse {
        try call(ModerationMethods.unfreezeGroup, UnfreezeGroupRequest(guid: guid))
    }

    // MARK: Invites

    @discardableResult
    public func invite(_ guid: String, _ members: [(String, Scope)], expiresInMs: Int64 = 0) throws(RPCError)
        -> [String: UserResult]
    {
        try call(
            ModerationMethods.inviteMembers,
            InviteMembersRequest(
                guid: guid, members: members.map { MemberToAdd(uid: $0.0, scope: $0.1) }, expiresInMs: expiresInMs)
        ).results
    }

    @discardableResult
    public func acceptInvite(_ guid: String) throws(RPCError) -> AcceptInviteResponse {
        try call(ModerationMethods.acceptInvite, AcceptInviteRequest(guid: guid))
    }

    @discardableResult
    public func declineInvite(_ guid: String) throws(RPCError) -> Action {
        try call(ModerationMethods.declineInvite, DeclineInviteRequest(guid: guid)).action ?? Action()
    }

    @discardableResult
    public func revokeInvite(_ guid: String, _ uid: String) throws(RPCError) -> Action {
        try call(ModerationMethods.revokeInvite, RevokeInviteRequest(guid: guid, uid: uid)).action ?? Action()
    }

    public func invites(_ guid: String, limit: UInt32 = 0, cursor: String = "") throws(RPCError) -> ListInvitesResponse
    {
        try call(ModerationMethods.listInvites, ListInvitesRequest(guid: guid, limit: limit, cursor: cursor))
    }

    public func myInvites(limit: UInt32 = 0, cursor: String = "") throws(RPCError) -> ListMyInvitesResponse {
        try call(ModerationMethods.listMyInvites, ListMyInvitesRequest(limit: limit, cursor: cursor))
    }

    // MARK: Join requests

    @discardableResult
    public func requestToJoin(_ guid: String, message: String = "") throws(RPCError) -> Action {
        try call(ModerationMethods.requestToJoin, RequestToJoinRequest(guid: guid, message: message)).action
            ?? Action()
    }

    @discardableResult
    public func approveJoinRequest(_ guid: String, _ uid: String) throws(RPCError) -> ApproveJoinRequestResponse {
        try call(ModerationMethods.approveJoinRequest, ApproveJoinRequestRequest(guid: guid, uid: uid))
    }

    @discardableResult
    public func rejectJoinRequest(_ guid: String, _ uid: String, reason: String = "") throws(RPCError) -> Action {
        try call(ModerationMethods.rejectJoinRequest, RejectJoinRequestRequest(guid: guid, uid: uid, reason: reason))
            .action ?? Action()
    }

    @discardableResult
    public func cancelJoinRequest(_ guid: String) throws(RPCError) -> Action {
        try call(ModerationMethods.cancelJoinRequest, CancelJoinRequestRequest(guid: guid)).action ?? Action()
    }

    public func joinRequests(_ guid: String, limit: UInt32 = 0, cursor: String = "") throws(RPCError)
        -> ListJoinRequestsResponse
    {
        try call(ModerationMethods.listJoinRequests, ListJoinRequestsRequest(guid: guid, limit: limit, cursor: cursor))
    }

    /// Turns the group's join requests on or off (an admin's UpdateGroup with the mask).
    @discardableResult
    public func setJoinRequests(_ guid: String, _ on: Bool) throws(RPCError) -> Group {
        try updateGroup(UpdateGroupRequest(guid: guid, updateMask: ["join_requests"], joinRequests: on))
    }

    // MARK: Reports

    @discardableResult
    public func report(_ guid: String, _ uid: String, category: ReportCategory = .spam, text: String = "")
        throws(RPCError) -> ReportMemberResponse
    {
        try call(
            ModerationMethods.reportMember, ReportMemberRequest(guid: guid, uid: uid, category: category, text: text))
    }

    @discardableResult
    public func resolveReport(_ guid: String, _ id: UInt64, _ resolution: ReportResolution, note: String = "")
        throws(RPCError) -> ResolveReportResponse
    {
        try call(
            ModerationMethods.resolveReport,
            ResolveReportRequest(guid: guid, reportID: id, resolution: resolution, note: note))
    }

    public func reports(_ guid: String, status: ReportStatus = .open, limit: UInt32 = 0, cursor: String = "")
        throws(RPCError) -> ListReportsResponse
    {
        try call(
            ModerationMethods.listReports, ListReportsRequest(guid: guid, status: status, limit: limit, cursor: cursor))
    }

    /// The answers to `checks` of (guid, uid) pairs, in order.
    public func checkPost(_ checks: [(String, String)]) throws(RPCError) -> [PostCheckResult] {
        try call(
            ModerationMethods.checkPost, CheckPostRequest(checks: checks.map { PostCheck(guid: $0.0, uid: $0.1) })
        ).results
    }

    /// The answer for `uid` (empty: the acting user) posting `text` (empty: none) in `guid`.
    public func checkPost(_ guid: String, _ uid: String = "", text: String = "") throws(RPCError) -> PostCheckResult {
        try call(ModerationMethods.checkPost, CheckPostRequest(checks: [PostCheck(guid: guid, uid: uid, text: text)]))
            .results.first ?? PostCheckResult()
    }

    // MARK: Content rules

    @discardableResult
    public func addContentRules(_ guid: String, _ rules: [NewContentRule]) throws(RPCError) -> AddContentRulesResponse {
        try call(ModerationMethods.addContentRules, AddContentRulesRequest(guid: guid, rules: rules))
    }

    @discardableResult
    public func deleteContentRules(_ guid: String, _ ids: [UInt64]) throws(RPCError) -> DeleteContentRulesResponse {
        try call(ModerationMethods.deleteContentRules, DeleteContentRulesRequest(guid: guid, ids: ids))
    }

    public func contentRules(_ guid: String, cursor: String = "", limit: UInt32 = 0) throws(RPCError)
        -> ListContentRulesResponse
    {
        try call(ModerationMethods.listContentRules, ListContentRulesRequest(guid: guid, cursor: cursor, limit: limit))
    }

    // MARK: Webhooks

    @discardableResult
    public func createWebhook(
        _ url: String, kinds: [ActionType] = [], guids: [String] = [], description: String = "", secret: String = ""
    ) throws(RPCError) -> CreateWebhookResponse {
        try call(
            ModerationMethods.createWebhook,
            CreateWebhookRequest(url: url, kinds: kinds, guids: guids, description: description, secret: secret))
    }

    @discardableResult
    public func updateWebhook(_ request: UpdateWebhookRequest) throws(RPCError) -> Webhook {
        try call(ModerationMethods.updateWebhook, request).webhook ?? Webhook()
    }

    @discardableResult
    public func deleteWebhook(_ id: String) throws(RPCError) -> Webhook {
        try call(ModerationMethods.deleteWebhook, DeleteWebhookRequest(id: id)).webhook ?? Webhook()
    }

    public func webhooks() throws(RPCError) -> [Webhook] {
        try call(ModerationMethods.listWebhooks, ListWebhooksRequest()).webhooks
    }

    @discardableResult
    public func replayWebhook(_ id: String, afterSeq: UInt64) throws(RPCError) -> Webhook {
        try call(ModerationMethods.replayWebhook, ReplayWebhookRequest(id: id, afterSeq: afterSeq)).webhook ?? Webhook()
    }

    public func testWebhook(_ id: String) throws(RPCError) -> TestWebhookResponse {
        try call(ModerationMethods.testWebhook, TestWebhookRequest(id: id))
    }

    // MARK: Bans from the app

    @discardableResult
    public func banFromApp(_ uid: String, reason: String = "", durationMs: Int64 = 0, shadow: Bool = false)
        throws(RPCError) -> BanUserFromAppResponse
    {
        try call(
            ModerationMethods.banUserFromApp,
            BanUserFromAppRequest(uid: uid, reason: reason, durationMs: durationMs, shadow: shadow))
    }

    @discardableResult
    public func unbanFromApp(_ uid: String) throws(RPCError) -> Action {
        try call(ModerationMethods.unbanUserFromApp, UnbanUserFromAppRequest(uid: uid)).action ?? Action()
    }

    public func appBans(limit: UInt32 = 0, cursor: String = "", search: String = "") throws(RPCError)
        -> ListAppBansResponse
    {
        try call(ModerationMethods.listAppBans, ListAppBansRequest(limit: limit, cursor: cursor, search: search))
    }

    // MARK: The action log and events

    public func actions(
        _ guid: String, afterSeq: UInt64 = 0, limit: UInt32 = 0, cursor: String = "", kinds: [ActionType] = [],
        actor: String = "", target: String = ""
    ) throws(RPCError) -> ListGroupActionsResponse {
        try call(
            ModerationMethods.listGroupActions,
            ListGroupActionsRequest(
                guid: guid, afterSeq: afterSeq, limit: limit, cursor: cursor, actions: kinds, actor: actor,
                target: target))
    }

    /// Every action of a group after `afterSeq` this client may see, page by page.
    public func allActions(_ guid: String, afterSeq: UInt64 = 0) throws(RPCError) -> [Action] {
        var all: [Action] = []
        var page = try actions(guid, afterSeq: afterSeq, limit: 100)
        all += page.actions
        while !page.nextCursor.isEmpty {
            page = try actions(guid, limit: 100, cursor: page.nextCursor)
            all += page.actions
        }
        return all
    }

    /// Starts a `Subscribe` stream whose actions are recorded as they arrive.
    public func subscribe(_ request: SubscribeRequest, acceptDeflate: Bool = false, keepsMessages: Bool = true)
        -> EventRecorder
    {
        var options = options
        options.timeoutMs = 0
        options.acceptDeflate = acceptDeflate
        return EventRecorder(connection: connection, request: request, options: options, keepsMessages: keepsMessages)
    }

    /// The app's whole log after `afterSeq` through `seq`, read by a whole-app subscription (the
    /// client must be the app). Throws when it does not arrive in time.
    public func replayLog(after afterSeq: UInt64 = 0, through seq: UInt64, timeoutMs: Int = 20_000) throws -> [Action] {
        guard seq > afterSeq else { return [] }
        let stream = subscribe(after: afterSeq)
        defer { stream.cancel() }
        guard stream.waitForSeq(seq, timeoutMs: timeoutMs) else {
            throw TestFailure(
                "the whole-app replay reached seq \(stream.lastSeq), not \(seq), in \(timeoutMs) ms (end: \(String(describing: stream.end)))"
            )
        }
        return stream.actions.filter { $0.seq <= seq }
    }

    /// Records a fresh action (the app creates a group of its own, owned by `owner`) and returns
    /// its seq: the log's head at that moment, for reading the whole log back.
    public func markHead(owner: String) throws(RPCError) -> UInt64 {
        let guid = "mark-\(UInt64.random(in: 0...UInt64.max))"
        try createGroup(guid, owner: owner)
        return try actions(guid).actions.last?.seq ?? 0
    }

    /// `subscribe` for the acting user (or the whole app, for the app), resuming after `afterSeq`.
    public func subscribe(after afterSeq: UInt64, kinds: [ActionType] = []) -> EventRecorder {
        subscribe(SubscribeRequest(wholeApp: actor.isEmpty, actions: kinds, start: .afterSeq(afterSeq)))
    }
}
