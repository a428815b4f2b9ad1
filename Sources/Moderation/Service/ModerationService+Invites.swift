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
            let uids = try Validation.identifiers(members.map(\.uid), field: "members")
            let grants = zip(uids, members).map { MemberGrant(uid: $0, scope: $1.scope) }
            let lifetime = try Validation.inviteLifetime(expiresInMs)
            return { (context: inout WriteContext) throws(ModerationError) -> [String: UserResult] in
                var access = try context.moderatorAccess(guid, toDo: "invite members")
                var results: [String: UserResult] = [:]
                for grant in grants {
                    results[grant.uid] = try context.perUser {
                        (context: inout WriteContext) throws(ModerationError) -> UserResult in
                        try context.inviteOne(&access, grant, expiresInMs: lifetime)
                    }
                }
                try context.saveCounters(&access)
                return results
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
        _ caller: Caller, guid: String, replay: @escaping ReplayEncoder<JoinResult>,
        completion: @escaping @Sendable (MutationResult<JoinResult>) -> Void
    ) {
        submit(caller, replay: replay, completion: completion) { () throws(ModerationError) -> WriteBody<JoinResult> in
            let actor = try ValidatedCaller(caller).requireUser()
            let guid = try Validation.identifier(guid, field: "guid")
            return { (context: inout WriteContext) throws(ModerationError) -> JoinResult in
                try context.acceptInvite(guid: guid, uid: actor)
            }
        }
    }

    /// Declines the acting user's live invite (`DeclineInvite`), in the order of `acceptInvite`.
    public func declineInvite(
        _ caller: Caller, guid: String, replay: @escaping ReplayEncoder<ActionRecord>,
        completion: @escaping @Sendable (MutationResult<ActionRecord>) -> Void
    ) {
        submit(caller, replay: replay, completion: completion) {
            () throws(ModerationError) -> WriteBody<ActionRecord> in
            let actor = try ValidatedCaller(caller).requireUser()
            let guid = try Validation.identifier(guid, field: "guid")
            return { (context: inout WriteContext) throws(ModerationError) -> ActionRecord in
                try context.declineInvite(guid: guid, uid: actor)
            }
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
        submit(caller, replay: replay, completion: completion) {
            () throws(ModerationError) -> WriteBody<ActionRecord> in
            let guid = try Validation.identifier(guid, field: "guid")
            let uid = try Validation.identifier(uid, field: "uid")
            return { (context: inout WriteContext) throws(ModerationError) -> ActionRecord in
                try context.revokeInvite(guid: guid, uid: uid)
            }
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
            let page = Array(rows.prefix(limit))
            let next =
                rows.count > limit
                ? page.last.map { Cursor.encode(invites: InviteKey(invitedAt: $0.invitedAt, id: $0.uid)) } : nil
            return Page(items: page, nextCursor: next ?? "")
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
            guard let appID = try context.appID() else { return Page(items: [], nextCursor: "") }
            let rows = try context.snapshot.invitesOf(
                appID: appID, uid: actor, query: InvitePageQuery(after: after, limit: limit + 1, liveAt: context.now))
            let page = rows.prefix(limit).map { listing in
                MyInvite(
                    invite: listing.invite,
                    group: GroupView(
                        group: Redaction.group(listing.group.group, for: .nonMember), hasJoined: false, scope: nil,
                        joinedAt: 0))
            }
            let next =
                rows.count > limit
                ? page.last.map {
                    Cursor.encode(myInvites: InviteKey(invitedAt: $0.invite.invitedAt, id: $0.group.group.guid))
                } : nil
            return Page(items: Array(page), nextCursor: next ?? "")
        }
    }

    /// How long an invite stays live when the call does not say: 7 days.
    public static let defaultInviteLifetimeMs: Int64 = 7 * 86_400_000
    /// The longest an invite may stay live: 30 days.
    public static let maxInviteLifetimeMs: Int64 = 30 * 86_400_000
}
