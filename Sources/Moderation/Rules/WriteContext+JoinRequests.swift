/// The writer's part of join requests ("knock"). A request is no membership, so recording one
/// (or its rejection or cancellation) leaves the group's version alone; approving adds a member.
extension WriteContext {
    /// Files the acting user's request to join (`RequestToJoin`).
    ///
    /// Order: the group exists (a private group with requests off does not exist for a
    /// non-member: `ERR_GROUP_NOT_FOUND`) → the user exists → requests off
    /// (`ERR_JOIN_REQUESTS_DISABLED`) → banned (`ERR_BANNED_GROUPMEMBER`) → a member
    /// (`ERR_ALREADY_JOINED`) → pending (`ERR_ALREADY_REQUESTED`) → the group's pending requests
    /// at their limit (`ERR_RATE_LIMITED`).
    mutating func requestToJoin(guid: String, uid: String, message: String, limit: Int) throws(ModerationError)
        -> ActionRecord
    {
        let access = try access(guid)
        let group = access.stored.group
        if group.type == .private && !group.joinRequests && access.actorMembership == nil {
            throw .groupNotFound(guid)
        }
        let user = try requireUser(uid)
        guard group.joinRequests else {
            throw ModerationError(.joinRequestsDisabled, "group \(guid) does not take join requests")
        }
        if try banState(access, uid: uid).active != nil { throw .bannedGroupMember(uid, guid) }
        if access.actorMembership != nil { throw .alreadyJoined(uid, guid) }
        if try tx.joinRequest(groupID: access.groupID, uid: uid) != nil {
            throw ModerationError(.alreadyRequested, "user \(uid) has already asked to join group \(guid)")
        }
        let pending = try tx.pendingJoinRequestCount(groupID: access.groupID)
        guard pending < limit else {
            throw ModerationError(
                .rateLimited, "group \(guid) has \(pending) pending join requests, the most it takes; retry later",
                details: ["max_pending_join_requests": String(limit)])
        }
        try tx.insertJoinRequest(
            groupID: access.groupID, user: user, request: JoinRequest(uid: uid, message: message, requestedAt: now))
        return try record(.joinRequested, on: user.user, group: access.stored)
    }

    /// Approves `uid`'s pending request (steps 2–8): the group visible, the actor a member and an
    /// admin or moderator, the user exists, not banned (`ERR_BANNED_GROUPMEMBER`), not a member
    /// (`ERR_ALREADY_JOINED`), a pending request (`ERR_JOIN_REQUEST_NOT_FOUND`). The user becomes
    /// a participant and `joinRequestApproved` is recorded.
    mutating func approveJoinRequest(guid: String, uid: String) throws(ModerationError) -> GroupActionResult {
        var access = try moderatorAccess(guid, toDo: "approve join requests")
        let user = try requireUser(uid)
        let banned = try banState(access, uid: uid)
        if banned.active != nil { throw .bannedGroupMember(uid, guid) }
        if try tx.membership(groupID: access.groupID, uid: uid) != nil { throw .alreadyJoined(uid, guid) }
        guard try tx.joinRequest(groupID: access.groupID, uid: uid) != nil else {
            throw .joinRequestNotFound(uid, guid)
        }
        try expire(banned, in: &access)
        try tx.insertMember(
            groupID: access.groupID, user: user, membership: Membership(scope: .participant, joinedAt: now))
        access.stored.group.membersCount += 1
        access.stored.group.version += 1
        let action = try record(.joinRequestApproved, on: user.user, group: access.stored, newScope: .participant)
        try saveCounters(&access)
        return GroupActionResult(action: action, group: access.view())
    }

    /// Rejects `uid`'s pending request (steps 2–8, as approving, without the ban and member
    /// checks: a banned user or a member has no request); `joinRequestRejected` carries `reason`.
    mutating func rejectJoinRequest(guid: String, uid: String, reason: String) throws(ModerationError)
        -> GroupActionResult
    {
        let access = try moderatorAccess(guid, toDo: "reject join requests")
        let user = try requireUser(uid)
        guard try tx.joinRequest(groupID: access.groupID, uid: uid) != nil else {
            throw .joinRequestNotFound(uid, guid)
        }
        try tx.deleteJoinRequest(groupID: access.groupID, uid: uid)
        let action = try record(.joinRequestRejected, on: user.user, group: access.stored, reason: reason)
        return GroupActionResult(action: action, group: access.view())
    }

    /// Withdraws the acting user's pending request (`CancelJoinRequest`). A private group exists
    /// for a non-member only while their request is pending (else `ERR_GROUP_NOT_FOUND`); other
    /// groups answer `ERR_JOIN_REQUEST_NOT_FOUND`.
    mutating func cancelJoinRequest(guid: String, uid: String) throws(ModerationError) -> ActionRecord {
        let access = try access(guid)
        let user = try requireUser(uid)
        guard try tx.joinRequest(groupID: access.groupID, uid: uid) != nil else {
            try access.requireVisible()
            throw .joinRequestNotFound(uid, guid)
        }
        try tx.deleteJoinRequest(groupID: access.groupID, uid: uid)
        return try record(.joinRequestCancelled, on: user.user, group: access.stored)
    }
}
