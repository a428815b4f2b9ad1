/// The writer's part of `DeleteUser`.
extension WriteContext {
    /// Deletes the user `uid`: the user itself or the app; a user who owns a group is refused
    /// (`ERR_USER_OWNS_GROUPS`, naming up to 10 of them) until ownership is transferred.
    ///
    /// Every check runs before the first write: the groups the user is in are locked and their
    /// owners read first. Then, in each group the user is a member of, a `left` action (reason
    /// `userDeleted`, by the caller); in each group that holds a ban of theirs, the ban goes with
    /// them and a `userDeleted` action says so (a ban past its expiry is converted as every
    /// write converts one: `unbanned`, reason `expired`). A ban from the app goes with them too
    /// (`dropAppBan`). Last the profile is erased and the uid kept as a tombstone
    /// (`StoreTransaction.deleteUser`).
    mutating func deleteUser(_ uid: String) throws(ModerationError) -> DeleteUserResult {
        if let actor = caller.actor, actor != uid {
            // Deleting oneself is the one call a user banned from the app may still make.
            try requireNotBannedFromApp()
            throw ModerationError(.permissionDenied, "\(actor) may not delete user \(uid)")
        }
        let user = try requireUser(uid)
        guard let appID = try appID() else { throw .uidNotFound(uid) }
        var memberships: [GroupAccess] = []
        var owned: [String] = []
        for guid in try tx.groupsOf(appID: appID, uid: uid) {
            let access = try access(guid)
            if access.stored.group.owner == uid { owned.append(guid) }
            memberships.append(access)
        }
        if !owned.isEmpty {
            let named = owned.prefix(Self.ownedGroupsNamed).joined(separator: ", ")
            let more = owned.count > Self.ownedGroupsNamed ? " and \(owned.count - Self.ownedGroupsNamed) more" : ""
            throw ModerationError(
                .userOwnsGroups,
                "user \(uid) owns \(owned.count == 1 ? "group" : "groups") \(named)\(more); transfer ownership first",
                details: [
                    "guids": owned.prefix(Self.ownedGroupsNamed).joined(separator: ","),
                    "owned_groups": String(owned.count),
                ])
        }
        var result = DeleteUserResult()
        for var access in memberships {
            let scope = try tx.membership(groupID: access.groupID, uid: uid)?.scope
            try tx.deleteMember(groupID: access.groupID, uid: uid)
            access.stored.group.membersCount -= 1
            access.stored.group.version += 1
            let action = try record(
                .left, on: user.user, group: access.stored, oldScope: scope, reason: Self.deletionReason)
            try saveCounters(&access)
            result.groupsLeft += 1
            result.lastSeq = action.seq
        }
        for guid in try tx.groupsBanning(appID: appID, uid: uid) {
            var access = try access(guid)
            let action: ActionRecord
            switch try banState(access, uid: uid) {
            case .none:
                continue
            case .expired(let ban):
                action = try expire(ban, in: &access)
            case .active(let ban):
                try tx.deleteBan(groupID: access.groupID, uid: uid)
                access.stored.group.version += 1
                action = try record(.userDeleted, on: user.user, group: access.stored, oldScope: ban.scopeBefore)
                result.bansDropped += 1
            }
            try saveCounters(&access)
            result.lastSeq = action.seq
        }
        if let action = try dropAppBan(of: user.user) { result.lastSeq = action.seq }
        try tx.deleteUser(user, at: now)
        return result
    }

    /// How many of the groups a user owns `ERR_USER_OWNS_GROUPS` names.
    static let ownedGroupsNamed = 10

    /// The reason of the `left` actions a deletion records.
    static let deletionReason = "userDeleted"
}
