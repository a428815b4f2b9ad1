public import Moderation

/// A synchronous face of `ModerationService` for one caller, for tests: every mutation waits
/// for its completion and returns its value or throws its error.
public struct ModerationClient: Sendable {
    public let service: ModerationService
    public var caller: Caller
    /// When set, the group's invariants are checked after every mutation of a group.
    public var store: (any ModerationStore)?

    public init(service: ModerationService, caller: Caller, store: (any ModerationStore)? = nil) {
        self.service = service
        self.caller = caller
        self.store = store
    }

    /// Checks the invariants of `guid` after a mutation, whatever its outcome.
    private func checked<T>(_ guid: String, _ what: String, _ body: () throws(ModerationError) -> T)
        throws(ModerationError) -> T
    {
        defer {
            if let store {
                Invariants.expectHeld(
                    store: store, app: caller.app, guid: guid.lowercased(), after: "\(what) on \(guid)")
            }
        }
        return try body()
    }

    /// The same app, acting as `uid`.
    public func acting(as uid: String) -> ModerationClient {
        var copy = self
        copy.caller = Caller(app: caller.app, actor: uid)
        return copy
    }

    /// The same caller with an idempotency key.
    public func withKey(_ key: String) -> ModerationClient {
        var copy = self
        copy.caller.idempotencyKey = key
        return copy
    }

    private func run<T: Sendable>(
        _ start: (Caller, @escaping ReplayEncoder<T>, @escaping @Sendable (MutationResult<T>) -> Void) -> Void
    ) throws(ModerationError) -> T {
        let caller = caller
        return try MutationWaiter.wait { completion in start(caller, MutationWaiter.describe, completion) }.get()
    }

    // MARK: Users

    @discardableResult
    public func createUser(_ uid: String, name: String? = nil, avatar: String = "", metadata: [String: String] = [:])
        throws(ModerationError) -> User
    {
        try run {
            service.createUser(
                $0, NewUser(uid: uid, name: name ?? "User \(uid)", avatar: avatar, metadata: metadata), replay: $1,
                completion: $2)
        }
    }

    @discardableResult
    public func updateUser(_ update: UserUpdate) throws(ModerationError) -> User {
        try run { service.updateUser($0, update, replay: $1, completion: $2) }
    }

    public func getUser(_ uid: String) throws(ModerationError) -> User {
        try service.getUser(caller, uid: uid)
    }

    @discardableResult
    public func deleteUser(_ uid: String) throws(ModerationError) -> DeleteUserResult {
        try run { service.deleteUser($0, uid: uid, replay: $1, completion: $2) }
    }

    // MARK: Groups

    @discardableResult
    public func createGroup(_ group: NewGroup) throws(ModerationError) -> CreateGroupResult {
        try checked(group.guid, "createGroup") { () throws(ModerationError) in
            try run { service.createGroup($0, group, replay: $1, completion: $2) }
        }
    }

    @discardableResult
    public func createGroup(
        _ guid: String, type: GroupType = .public, password: String = "", owner: String? = nil,
        members: [MemberGrant] = [],
        bans: [String] = [], tags: [String] = []
    ) throws(ModerationError) -> CreateGroupResult {
        try createGroup(
            NewGroup(
                guid: guid, name: "Group \(guid)", type: type, password: password, tags: tags, owner: owner,
                members: members, bannedUIDs: bans))
    }

    public func getGroup(_ guid: String) throws(ModerationError) -> GroupView {
        try service.getGroup(caller, guid: guid)
    }

    @discardableResult
    public func updateGroup(_ update: GroupUpdate) throws(ModerationError) -> GroupView {
        try checked(update.guid, "updateGroup") { () throws(ModerationError) in
            try run { service.updateGroup($0, update, replay: $1, completion: $2) }
        }
    }

    @discardableResult
    public func deleteGroup(_ guid: String) throws(ModerationError) -> ActionRecord {
        try checked(guid, "deleteGroup") { () throws(ModerationError) in
            try run { service.deleteGroup($0, guid: guid, replay: $1, completion: $2) }
        }
    }

    public func listGroups(_ options: ListGroupsOptions = ListGroupsOptions()) throws(ModerationError) -> Page<
        GroupView
    > {
        try service.listGroups(caller, options: options)
    }

    // MARK: Membership

    @discardableResult
    public func join(_ guid: String, password: String = "") throws(ModerationError) -> GroupActionResult {
        try checked(guid, "join") { () throws(ModerationError) in
            try run { service.joinGroup($0, guid: guid, password: password, replay: $1, completion: $2) }
        }
    }

    @discardableResult
    public func leave(_ guid: String) throws(ModerationError) -> ActionRecord {
        try checked(guid, "leave") { () throws(ModerationError) in
            try run { service.leaveGroup($0, guid: guid, replay: $1, completion: $2) }
        }
    }

    @discardableResult
    public func addMembers(_ guid: String, _ members: [MemberGrant]) throws(ModerationError) -> AddMembersResult {
        try checked(guid, "addMembers") { () throws(ModerationError) in
            try run { service.addMembers($0, guid: guid, members: members, replay: $1, completion: $2) }
        }
    }

    public func listMembers(_ guid: String, _ options: ListMembersOptions = ListMembersOptions())
        throws(ModerationError) -> Page<Member>
    {
        try service.listMembers(caller, guid: guid, options: options)
    }

    public func memberState(_ guid: String, _ uid: String? = nil) throws(ModerationError) -> MemberState {
        try service.getMemberState(caller, guid: guid, uid: uid)
    }

    // MARK: Moderation

    @discardableResult
    public func kick(_ guid: String, _ uid: String) throws(ModerationError) -> ActionRecord {
        try checked(guid, "kick") { () throws(ModerationError) in
            try run { service.kickMember($0, guid: guid, uid: uid, replay: $1, completion: $2) }
        }
    }

    @discardableResult
    public func ban(
        _ guid: String, _ uid: String, reason: String = "", durationMs: Int64 = 0, ifNotBanned: Bool = false
    ) throws(ModerationError) -> BanResult {
        try checked(guid, "ban") { () throws(ModerationError) in
            try run {
                service.banMember(
                    $0, guid: guid, uid: uid, reason: reason, durationMs: durationMs, ifNotBanned: ifNotBanned,
                    replay: $1, completion: $2)
            }
        }
    }

    @discardableResult
    public func unban(_ guid: String, _ uid: String, onlyIfBanned: Bool = false) throws(ModerationError) -> LiftResult {
        try checked(guid, "unban") { () throws(ModerationError) in
            try run {
                service.unbanMember($0, guid: guid, uid: uid, onlyIfBanned: onlyIfBanned, replay: $1, completion: $2)
            }
        }
    }

    public func listBanned(_ guid: String, _ options: ListBannedOptions = ListBannedOptions()) throws(ModerationError)
        -> Page<Ban>
    {
        try service.listBannedMembers(caller, guid: guid, options: options)
    }

    @discardableResult
    public func changeScope(_ guid: String, _ uid: String, to scope: Scope) throws(ModerationError) -> ScopeChangeResult
    {
        try checked(guid, "changeScope") { () throws(ModerationError) in
            try run { service.changeMemberScope($0, guid: guid, uid: uid, scope: scope, replay: $1, completion: $2) }
        }
    }

    @discardableResult
    public func transfer(_ guid: String, to uid: String) throws(ModerationError) -> GroupActionResult {
        try checked(guid, "transfer") { () throws(ModerationError) in
            try run { service.transferOwnership($0, guid: guid, uid: uid, replay: $1, completion: $2) }
        }
    }

    @discardableResult
    public func bulkKick(_ guid: String, _ uids: [String]) throws(ModerationError) -> [String: UserResult] {
        try checked(guid, "bulkKick") { () throws(ModerationError) in
            try run { service.bulkKickMembers($0, guid: guid, uids: uids, replay: $1, completion: $2) }
        }
    }

    @discardableResult
    public func bulkBan(
        _ guid: String, _ uids: [String], reason: String = "", durationMs: Int64 = 0, ifNotBanned: Bool = false
    ) throws(ModerationError) -> [String: UserResult] {
        try checked(guid, "bulkBan") { () throws(ModerationError) in
            try run {
                service.bulkBanMembers(
                    $0, guid: guid, uids: uids, reason: reason, durationMs: durationMs, ifNotBanned: ifNotBanned,
                    replay: $1, completion: $2)
            }
        }
    }

    @discardableResult
    public func bulkUnban(_ guid: String, _ uids: [String], onlyIfBanned: Bool = false) throws(ModerationError)
        -> [String: UserResult]
    {
        try checked(guid, "bulkUnban") { () throws(ModerationError) in
            try run {
                service.bulkUnbanMembers(
                    $0, guid: guid, uids: uids, onlyIfBanned: onlyIfBanned, replay: $1, completion: $2)
            }
        }
    }

    // MARK: Mutes, freezes, posting

    @discardableResult
    public func mute(
        _ guid: String, _ uid: String, reason: String = "", durationMs: Int64 = 0, ifNotMuted: Bool = false
    ) throws(ModerationError) -> MuteResult {
        try checked(guid, "mute") { () throws(ModerationError) in
            try run {
                service.muteMember(
                    $0, guid: guid, uid: uid, reason: reason, durationMs: durationMs, ifNotMuted: ifNotMuted,
                    replay: $1, completion: $2)
            }
        }
    }

    @discardableResult
    public func unmute(_ guid: String, _ uid: String, onlyIfMuted: Bool = false) throws(ModerationError) -> LiftResult {
        try checked(guid, "unmute") { () throws(ModerationError) in
            try run {
                service.unmuteMember($0, guid: guid, uid: uid, onlyIfMuted: onlyIfMuted, replay: $1, completion: $2)
            }
        }
    }

    @discardableResult
    public func bulkMute(
        _ guid: String, _ uids: [String], reason: String = "", durationMs: Int64 = 0, ifNotMuted: Bool = false
    ) throws(ModerationError) -> [String: UserResult] {
        try checked(guid, "bulkMute") { () throws(ModerationError) in
            try run {
                service.bulkMuteMembers(
                    $0, guid: guid, uids: uids, reason: reason, durationMs: durationMs, ifNotMuted: ifNotMuted,
                    replay: $1, completion: $2)
            }
        }
    }

    @discardableResult
    public func bulkUnmute(_ guid: String, _ uids: [String], onlyIfMuted: Bool = false) throws(ModerationError)
        -> [String: UserResult]
    {
        try checked(guid, "bulkUnmute") { () throws(ModerationError) in
            try run {
                service.bulkUnmuteMembers(
                    $0, guid: guid, uids: uids, onlyIfMuted: onlyIfMuted, replay: $1, completion: $2)
            }
        }
    }

    @discardableResult
    public func freeze(_ guid: String, reason: String = "") throws(ModerationError) -> GroupActionResult {
        try checked(guid, "freeze") { () throws(ModerationError) in
            try run { service.freezeGroup($0, guid: guid, reason: reason, replay: $1, completion: $2) }
        }
    }

    @discardableResult
    public func unfreeze(_ guid: String) throws(ModerationError) -> GroupActionResult {
        try checked(guid, "unfreeze") { () throws(ModerationError) in
            try run { service.unfreezeGroup($0, guid: guid, replay: $1, completion: $2) }
        }
    }

    // MARK: Invites

    @discardableResult
    public func invite(_ guid: String, _ members: [MemberGrant], expiresInMs: Int64 = 0) throws(ModerationError)
        -> [String: UserResult]
    {
        try checked(guid, "invite") { () throws(ModerationError) in
            try run {
                service.inviteMembers(
                    $0, guid: guid, members: members, expiresInMs: expiresInMs, replay: $1, completion: $2)
            }
        }
    }

    /// Invites one user; throws the user's own error when it failed.
    @discardableResult
    public func invite(_ guid: String, _ uid: String, scope: Scope = .participant, expiresInMs: Int64 = 0)
        throws(ModerationError) -> UInt64
    {
        let result = try invite(guid, [MemberGrant(uid: uid, scope: scope)], expiresInMs: expiresInMs)[uid]
        if let error = result?.error { throw error }
        return result?.seq ?? 0
    }

    @discardableResult
    public func acceptInvite(_ guid: String) throws(ModerationError) -> GroupActionResult {
        try checked(guid, "acceptInvite") { () throws(ModerationError) in
            try run { service.acceptInvite($0, guid: guid, replay: $1, completion: $2) }
        }
    }

    @discardableResult
    public func declineInvite(_ guid: String) throws(ModerationError) -> ActionRecord {
        try checked(guid, "declineInvite") { () throws(ModerationError) in
            try run { service.declineInvite($0, guid: guid, replay: $1, completion: $2) }
        }
    }

    @discardableResult
    public func revokeInvite(_ guid: String, _ uid: String) throws(ModerationError) -> ActionRecord {
        try checked(guid, "revokeInvite") { () throws(ModerationError) in
            try run { service.revokeInvite($0, guid: guid, uid: uid, replay: $1, completion: $2) }
        }
    }

    public func listInvites(_ guid: String, limit: Int = 0, cursor: String = "") throws(ModerationError)
        -> Page<Invite>
    {
        try service.listInvites(caller, guid: guid, limit: limit, cursor: cursor)
    }

    public func listMyInvites(limit: Int = 0, cursor: String = "") throws(ModerationError) -> Page<MyInvite> {
        try service.listMyInvites(caller, limit: limit, cursor: cursor)
    }

    // MARK: Join requests

    @discardableResult
    public func requestToJoin(_ guid: String, message: String = "") throws(ModerationError) -> ActionRecord {
        try checked(guid, "requestToJoin") { () throws(ModerationError) in
            try run { service.requestToJoin($0, guid: guid, message: message, replay: $1, completion: $2) }
        }
    }

    @discardableResult
    public func approveJoinRequest(_ guid: String, _ uid: String) throws(ModerationError) -> GroupActionResult {
        try checked(guid, "approveJoinRequest") { () throws(ModerationError) in
            try run { service.approveJoinRequest($0, guid: guid, uid: uid, replay: $1, completion: $2) }
        }
    }

    @discardableResult
    public func rejectJoinRequest(_ guid: String, _ uid: String, reason: String = "") throws(ModerationError)
        -> GroupActionResult
    {
        try checked(guid, "rejectJoinRequest") { () throws(ModerationError) in
            try run { service.rejectJoinRequest($0, guid: guid, uid: uid, reason: reason, replay: $1, completion: $2) }
        }
    }

    @discardableResult
    public func cancelJoinRequest(_ guid: String) throws(ModerationError) -> ActionRecord {
        try checked(guid, "cancelJoinRequest") { () throws(ModerationError) in
            try run { service.cancelJoinRequest($0, guid: guid, replay: $1, completion: $2) }
        }
    }

    public func listJoinRequests(_ guid: String, limit: Int = 0, cursor: String = "") throws(ModerationError)
        -> Page<JoinRequest>
    {
        try service.listJoinRequests(caller, guid: guid, limit: limit, cursor: cursor)
    }

    /// Turns the group's join requests on or off (an admin's UpdateGroup).
    @discardableResult
    public func setJoinRequests(_ guid: String, _ on: Bool) throws(ModerationError) -> GroupView {
        try updateGroup(GroupUpdate(guid: guid, joinRequests: on))
    }

    // MARK: Reports

    @discardableResult
    public func report(_ guid: String, _ uid: String, category: Report.Category = .spam, text: String = "")
        throws(ModerationError) -> ReportResult
    {
        try checked(guid, "report") { () throws(ModerationError) in
            try run {
                service.reportMember(
                    $0, guid: guid, uid: uid, category: category, text: text, replay: $1, completion: $2)
            }
        }
    }

    @discardableResult
    public func resolveReport(_ guid: String, _ id: UInt64, _ resolution: Report.Resolution, note: String = "")
        throws(ModerationError) -> ReportResult
    {
        try checked(guid, "resolveReport") { () throws(ModerationError) in
            try run {
                service.resolveReport(
                    $0, guid: guid, reportID: id, resolution: resolution, note: note, replay: $1, completion: $2)
            }
        }
    }

    public func listReports(_ guid: String, open: Bool = true, limit: Int = 0, cursor: String = "")
        throws(ModerationError) -> ReportPage
    {
        try service.listReports(caller, guid: guid, open: open, limit: limit, cursor: cursor)
    }

    public func checkPost(_ checks: [PostCheck]) throws(ModerationError) -> [PostVerdict] {
        try service.checkPost(caller, checks: checks)
    }

    /// The one verdict of `uid` (empty: the caller) posting `text` (empty: none) in `guid`.
    public func checkPost(_ guid: String, _ uid: String = "", text: String = "") throws(ModerationError) -> PostVerdict
    {
        try service.checkPost(caller, checks: [PostCheck(guid: guid, uid: uid, text: text)])[0]
    }

    // MARK: Bans from the app

    @discardableResult
    public func banFromApp(_ uid: String, reason: String = "", durationMs: Int64 = 0, shadow: Bool = false)
        throws(ModerationError) -> AppBanResult
    {
        try run {
            service.banUserFromApp(
                $0, uid: uid, reason: reason, durationMs: durationMs, shadow: shadow, replay: $1, completion: $2)
        }
    }

    @discardableResult
    public func unbanFromApp(_ uid: String) throws(ModerationError) -> ActionRecord {
        try run { service.unbanUserFromApp($0, uid: uid, replay: $1, completion: $2) }
    }

    public func listAppBans(_ options: ListBannedOptions = ListBannedOptions()) throws(ModerationError) -> Page<AppBan>
    {
        try service.listAppBans(caller, options: options)
    }

    // MARK: Content rules

    /// Adds rules to the app's set (`guid` empty) or a group's.
    @discardableResult
    public func addContentRules(_ guid: String, _ rules: [NewContentRule]) throws(ModerationError)
        -> ContentRulesResult
    {
        try run { service.addContentRules($0, guid: guid, rules: rules, replay: $1, completion: $2) }
    }

    /// Adds one rule and returns it (failing with its refusal when refused).
    @discardableResult
    public func addContentRule(
        _ guid: String, _ kind: ContentRuleKind, _ pattern: String, _ action: ContentAction = .block
    ) throws(ModerationError) -> ContentRule {
        let outcome = try addContentRules(guid, [NewContentRule(kind: kind, pattern: pattern, action: action)])
            .outcomes[0]
        if let error = outcome.error { throw error }
        return outcome.rule!
    }

    @discardableResult
    public func deleteContentRules(_ guid: String, _ ids: [UInt64]) throws(ModerationError) -> ContentRulesResult {
        try run { service.deleteContentRules($0, guid: guid, ids: ids, replay: $1, completion: $2) }
    }

    public func listContentRules(_ guid: String, limit: Int = 0, cursor: String = "") throws(ModerationError)
        -> Page<ContentRule>
    {
        try service.listContentRules(caller, guid: guid, limit: limit, cursor: cursor)
    }

    // MARK: Webhooks

    @discardableResult
    public func createWebhook(_ new: NewWebhook) throws(ModerationError) -> CreatedWebhook {
        try run { service.createWebhook($0, new, replay: $1, completion: $2) }
    }

    /// Creates a webhook to `url` with nothing else set.
    @discardableResult
    public func createWebhook(_ url: String = "https://hooks.example.com/moderation") throws(ModerationError)
        -> CreatedWebhook
    {
        try createWebhook(NewWebhook(url: url))
    }

    @discardableResult
    public func updateWebhook(_ id: String, _ update: WebhookUpdate) throws(ModerationError) -> Webhook {
        try run { service.updateWebhook($0, id: id, update, replay: $1, completion: $2) }
    }

    @discardableResult
    public func deleteWebhook(_ id: String) throws(ModerationError) -> Webhook {
        try run { service.deleteWebhook($0, id: id, replay: $1, completion: $2) }
    }

    @discardableResult
    public func replayWebhook(_ id: String, afterSeq: UInt64) throws(ModerationError) -> Webhook {
        try run { service.replayWebhook($0, id: id, afterSeq: afterSeq, replay: $1, completion: $2) }
    }

    public func listWebhooks() throws(ModerationError) -> [Webhook] {
        try service.listWebhooks(caller)
    }

    public func webhookToTest(_ id: String) throws(ModerationError) -> StoredWebhook {
        try service.webhookToTest(caller, id: id)
    }

    public func actions(_ guid: String, _ options: ListActionsOptions = ListActionsOptions()) throws(ModerationError)
        -> ActionPage
    {
        try service.listGroupActions(caller, guid: guid, options: options)
    }

    /// The error code `body` fails with, or nil when it succeeds (`.internal` for an error that
    /// is not a `ModerationError`).
    public static func code<T>(_ body: () throws -> T) -> ErrorCode? {
        error(body)?.code
    }

    /// The error `body` fails with, or nil when it succeeds (`.internal` for an error that is not
    /// a `ModerationError`).
    public static func error<T>(_ body: () throws -> T) -> ModerationError? {
        do {
            _ = try body()
            return nil
        } catch let error as ModerationError {
            return error
        } catch {
            return ModerationError(.internal, "\(error)")
        }
    }
}
