extension ModerationService {
    /// Asks to join a group (`RequestToJoin`): a non-member, when the group takes join requests.
    ///
    /// Order: arguments (the app cannot ask; message ≤ 255) → group exists (a private group with
    /// requests off: `ERR_GROUP_NOT_FOUND`, its existence never leaks) → the user exists →
    /// requests off (`ERR_JOIN_REQUESTS_DISABLED`) → banned (`ERR_BANNED_GROUPMEMBER`) → a
    /// member (`ERR_ALREADY_JOINED`) → already pending (`ERR_ALREADY_REQUESTED`) → the group's
    /// pending requests at `maxPendingJoinRequests` (`ERR_RATE_LIMITED`).
    public func requestToJoin(
        _ caller: Caller, guid: String, message: String = "", replay: @escaping ReplayEncoder<ActionRecord>,
        completion: @escaping @Sendable (MutationResult<ActionRecord>) -> Void
    ) {
        let limit = configuration.maxPendingJoinRequests
        submitAsUser(
            caller, guid: guid, replay: replay, completion: completion,
            validate: { () throws(ModerationError) in
                try Validation.text(message, field: "message", max: Validation.maxDescription)
            }
        ) { (context: inout WriteContext, guid: String, actor: String) throws(ModerationError) -> ActionRecord in
            try context.requestToJoin(guid: guid, uid: actor, message: message, limit: limit)
        }
    }

    /// Approves a pending join request (`ApproveJoinRequest`): admins and moderators; the user
    /// becomes a participant.
    ///
    /// Order: arguments → group visible → actor member → actor admin/moderator → user exists →
    /// banned (`ERR_BANNED_GROUPMEMBER`) → a member (`ERR_ALREADY_JOINED`) → a pending request
    /// (`ERR_JOIN_REQUEST_NOT_FOUND`).
    public func approveJoinRequest(
        _ caller: Caller, guid: String, uid: String, replay: @escaping ReplayEncoder<GroupActionResult>,
        completion: @escaping @Sendable (MutationResult<GroupActionResult>) -> Void
    ) {
        submitOnUser(caller, guid: guid, uid: uid, replay: replay, completion: completion) {
            (context: inout WriteContext, guid: String, uid: String) throws(ModerationError) -> GroupActionResult in
            try context.approveJoinRequest(guid: guid, uid: uid)
        }
    }

    /// Rejects a pending join request (`RejectJoinRequest`) with a reason (≤ 512): admins and
    /// moderators. Order: arguments → group visible → actor member → actor admin/moderator →
    /// user exists → a pending request (`ERR_JOIN_REQUEST_NOT_FOUND`).
    public func rejectJoinRequest(
        _ caller: Caller, guid: String, uid: String, reason: String = "",
        replay: @escaping ReplayEncoder<GroupActionResult>,
        completion: @escaping @Sendable (MutationResult<GroupActionResult>) -> Void
    ) {
        submitOnUser(
            caller, guid: guid, uid: uid, replay: replay, completion: completion,
            validate: { () throws(ModerationError) in
                try Validation.text(reason, field: "reason", max: Validation.maxReason)
            }
        ) { (context: inout WriteContext, guid: String, uid: String) throws(ModerationError) -> GroupActionResult in
            try context.rejectJoinRequest(guid: guid, uid: uid, reason: reason)
        }
    }

    /// Withdraws the acting user's pending request (`CancelJoinRequest`). Order: arguments (the
    /// app has no requests) → group exists → the user exists → a pending request (none: a
    /// private group `ERR_GROUP_NOT_FOUND`, other types `ERR_JOIN_REQUEST_NOT_FOUND`).
    public func cancelJoinRequest(
        _ caller: Caller, guid: String, replay: @escaping ReplayEncoder<ActionRecord>,
        completion: @escaping @Sendable (MutationResult<ActionRecord>) -> Void
    ) {
        submitAsUser(caller, guid: guid, replay: replay, completion: completion) {
            (context: inout WriteContext, guid: String, actor: String) throws(ModerationError) -> ActionRecord in
            try context.cancelJoinRequest(guid: guid, uid: actor)
        }
    }

    /// Lists a group's pending join requests, oldest first (`ListJoinRequests`): admins and
    /// moderators. Order: arguments → group visible → actor member → actor admin/moderator.
    public func listJoinRequests(_ caller: Caller, guid: String, limit: Int = 0, cursor: String = "")
        throws(ModerationError) -> Page<JoinRequest>
    {
        let guid = try Validation.identifier(guid, field: "guid")
        let limit = try Validation.limit(limit)
        let after = try Cursor.joinRequestKey(cursor)
        return try read(caller) { (context: ReadContext) throws(ModerationError) -> Page<JoinRequest> in
            let access = try context.moderatorAccess(guid, toDo: "list join requests")
            let rows = try context.snapshot.joinRequests(
                groupID: access.groupID, query: JoinRequestPageQuery(after: after, limit: limit + 1))
            return Page(rows: rows, limit: limit) {
                Cursor.encode(joinRequests: MemberKey(joinedAt: $0.requestedAt, uid: $0.uid))
            }
        }
    }
}
