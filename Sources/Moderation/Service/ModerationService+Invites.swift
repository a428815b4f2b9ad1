extension ModerationService {
    /// Invites up to 100 users (`InviteMembers`), each with a scope they get on accepting:
    /// admins and moderators, granting scopes as for `AddMembers`. Steps 1–4 fail the whole call;
    /// steps 5–9 give a result per uid (`ERR_UID_NOT_FOUND`, `ERR_ALREADY_JOINED`,
    /// `ERR_BANNED_GROUPMEMBER`, `ERR_PERMISSION_DENIED`). Inviting someone already invited
    /// refreshes the invite. `expiresInMs` 0 means 7 days; at most 30 days.
    public func inviteMembers(
        _ caller: Caller, guid: String, members: [MemberGrant], expiresInMs: Int64 = 0,
        replay: @escaping ReplayEncoder<[String: UserResult]>,
        completion: @escaping @Sendable (MutationResult<[String: UserResult]>) -> Void
    ) {
        submit(caller, replay: replay, completion: completion) {
            () throws(ModerationError) -> WriteBody<[String: UserResult]> in
            let guid = try Validation.identifier(guid, field: "guid")
            let grants = try Validation.grants(members)
            let lifetime = try Validation.inviteLifetime(expiresInMs)
            return { (context: inout WriteContext) throws(ModerationError) -> [String: UserResult] in
                var access = try context.moderatorAccess(guid, toDo: "invite members")
                return try context.forEachTarget(grants, uid: \.uid, on: &access) {
                    (context: inout WriteContext, access: inout GroupAccess, grant: MemberGrant) throws(ModerationError)
                        -> UserResult in
                    try context.inviteOne(&access, grant, expiresInMs: lifetime)
                }
            }
        }
    }

    /// Accepts the acting user's live invite (`AcceptInvite`): they become a member with the
    /// invited scope, whatever the group's type.
    ///
    /// Order: arguments (the app cannot accept) → group exists → the user exists → not banned
    /// (`ERR_BANNED_GROUPMEMBER`) → not a member (`ERR_ALREADY_JOINED`) → a live invite (a
    /// private group without one: `ERR_GROUP_NOT_FOUND`; other types: `ERR_INVITE_NOT_FOUND`).
    public func acceptInvite(
        _ caller: Caller, guid: String, replay: @escaping ReplayEncoder<GroupActionResult>,
        completion: @escaping @Sendable (MutationResult<GroupActionResult>) -> Void
    ) {
        submitAsUser(caller, guid: guid, replay: replay, completion: completion) {
            (context: inout WriteContext, guid: String, actor: String) throws(ModerationError) -> GroupActionResult in
            try context.acceptInvite(guid: guid, uid: actor)
        }
    }

    /// Declines the acting user's live invite (`DeclineInvite`), in the order of `acceptInvite`.
    public func declineInvite(
        _ caller: Caller, guid: String, replay: @escaping ReplayEncoder<ActionRecord>,
        completion: @escaping @Sendable (MutationResult<ActionRecord>) -> Void
    ) {
        submitAsUser(caller, guid: guid, replay: replay, completion: completion) {
            (context: inout WriteContext, guid: String, actor: String) throws(ModerationError) -> ActionRecord in
            try context.declineInvite(guid: guid, uid: actor)
        }
    }

    /// Withdraws a user's live invite (`RevokeInvite`): admins; moderators only invites with
    /// scope participant.
    ///
    /// Order: arguments → group visible → actor member → actor admin/moderator → user exists →
    /// a live invite (`ERR_INVITE_NOT_FOUND`) → a moderator revoking an invite above participant
    /// (`ERR_PERMISSION_DENIED`).
    public func revokeInvite(
        _ caller: Caller, guid: String, uid: String, replay: @escaping ReplayEncoder<ActionRecord>,
        completion: @escaping @Sendable (MutationResult<ActionRecord>) -> Void
    ) {
        submitOnUser(caller, guid: guid, uid: uid, replay: replay, completion: completion) {
            (context: inout WriteContext, guid: String, uid: String) throws(ModerationError) -> ActionRecord in
            try context.revokeInvite(guid: guid, uid: uid)
        }
    }

    /// Lists a group's live invites, newest first (`ListInvites`): admins and moderators.
    ///
    /// Order: arguments → group visible → actor member → actor admin/moderator.
    public func listInvites(_ caller: Caller, guid: String, limit: Int = 0, cursor: String = "")
        throws(ModerationError) -> Page<Invite>
    {
        let guid = try Validation.identifier(guid, field: "guid")
        let limit = try Validation.limit(limit)
        let after = try Cursor.inviteKey(cursor)
        return try read(caller) { (context: ReadContext) throws(ModerationError) -> Page<Invite> in
            let access = try context.moderatorAccess(guid, toDo: "list invites")
            let rows = try context.snapshot.invites(
                groupID: access.groupID, query: InvitePageQuery(after: after, limit: limit + 1, liveAt: context.now))
            return Page(rows: rows, limit: limit) {
                Cursor.encode(invites: InviteKey(invitedAt: $0.invitedAt, id: $0.uid))
            }
        }
    }

    /// Lists the acting user's live invites across groups, newest first (`ListMyInvites`), each
    /// with its group as the invitee sees it: a private group is visible to the user it invites.
    public func listMyInvites(_ caller: Caller, limit: Int = 0, cursor: String = "") throws(ModerationError)
        -> Page<MyInvite>
    {
        let actor = try ValidatedCaller(caller).requireUser()
        let limit = try Validation.limit(limit)
        let after = try Cursor.myInviteKey(cursor)
        return try read(caller) { (context: ReadContext) throws(ModerationError) -> Page<MyInvite> in
            guard let appID = try context.appID() else { return .empty }
            let rows = try context.snapshot.invitesOf(
                appID: appID, uid: actor, query: InvitePageQuery(after: after, limit: limit + 1, liveAt: context.now))
            return Page(
                rows: rows, limit: limit,
                item: { listing in
                    MyInvite(
                        invite: listing.invite,
                        group: GroupView(
                            group: Redaction.group(listing.group.group, for: .nonMember), hasJoined: false, scope: nil,
                            joinedAt: 0))
                },
                cursor: { Cursor.encode(myInvites: InviteKey(invitedAt: $0.invite.invitedAt, id: $0.group.group.guid)) }
            )
        }
    }

    /// How long an invite stays live when the call does not say: 7 days.
    public static let defaultInviteLifetimeMs: Int64 = 7 * 86_400_000
    /// The longest an invite may stay live: 30 days.
    public static let maxInviteLifetimeMs: Int64 = 30 * 86_400_000
}
