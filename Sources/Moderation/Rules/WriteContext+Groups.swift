extension WriteContext {
    /// The writer's part of `CreateGroup`.
    mutating func createGroup(_ plan: CreateGroupPlan, passwordHash: String?) throws(ModerationError)
        -> CreateGroupResult
    {
        if let appID = try appID(), try tx.group(appID: appID, guid: plan.guid) != nil {
            throw ModerationError(.guidAlreadyExists, "group \(plan.guid) already exists")
        }
        let owner = try requireUser(plan.owner)
        let appID = try ensureAppID()
        let request = plan.group
        let group = Group(
            guid: plan.guid, name: request.name, icon: request.icon, description: request.description,
            type: request.type,
            metadata: request.metadata, tags: request.tags, owner: owner.user.uid, membersCount: 1, version: 1,
            createdAt: now, updatedAt: now)
        var stored = try tx.insertGroup(appID: appID, group, passwordHash: passwordHash)
        let ownerMembership = Membership(scope: .admin, joinedAt: now)
        try tx.insertMember(groupID: stored.id, user: owner, membership: ownerMembership)
        _ = try record(.created, on: owner.user, group: stored, newScope: .admin)

        var results: [String: UserResult] = [:]
        for grant in plan.members {
            results[grant.uid] = try perUser { (context: inout WriteContext) throws(ModerationError) -> UserResult in
                let user = try context.requireUser(grant.uid)
                if grant.uid == owner.user.uid { throw .alreadyJoined(grant.uid, plan.guid) }
                try context.tx.insertMember(
                    groupID: stored.id, user: user, membership: Membership(scope: grant.scope, joinedAt: context.now))
                stored.group.membersCount += 1
                stored.group.version += 1
                let action = try context.record(.added, on: user.user, group: stored, newScope: grant.scope)
                return .changed(seq: action.seq)
            }
        }
        for uid in plan.bans {
            results[uid] = try perUser { (context: inout WriteContext) throws(ModerationError) -> UserResult in
                let user = try context.requireUser(uid)
                let ban = Ban(
                    uid: uid, scopeBefore: nil, joinedAt: 0, bannedAt: context.now, bannedBy: context.caller.actionUID)
                try context.tx.insertBan(groupID: stored.id, user: user, ban: ban)
                stored.group.version += 1
                let action = try context.record(.banned, on: user.user, group: stored)
                return .changed(seq: action.seq)
            }
        }
        try tx.updateGroup(&stored, descriptive: false)
        let creatorMembership: Membership? = caller.actor == owner.user.uid ? ownerMembership : nil
        return CreateGroupResult(
            group: GroupAccess(stored: stored, caller: caller, membership: creatorMembership).view(), results: results)
    }

    /// Runs one user's part of a many-user operation: a domain error becomes that user's result,
    /// a storage error fails the whole operation.
    mutating func perUser(_ body: (inout WriteContext) throws(ModerationError) -> UserResult) throws(ModerationError)
        -> UserResult
    {
        do {
            return try body(&self)
        } catch  where !error.code.isStoreFailure {
            return .failed(error)
        }
    }

    /// The writer's part of `UpdateGroup`.
    mutating func updateGroup(guid: String, _ update: GroupUpdate, newPasswordHash: String?) throws(ModerationError)
        -> GroupView
    {
        var access = try access(guid)
        try access.requireVisible()
        try access.requireMember()
        try access.requireRank(.moderator, toDo: "update the group")
        if update.touchesAdminFields {
            try access.requireRank(.admin, toDo: "change the type, password or join requests of the group")
        }
        if let expected = update.ifVersion, expected != access.stored.group.version {
            throw ModerationError(
                .versionConflict, "group \(guid) is at version \(access.stored.group.version), not \(expected)")
        }
        let before = access.stored
        var group = before.group
        let newType = update.type ?? group.type
        var hash = before.passwordHash
        if newType == .password {
            if let newPasswordHash {
                hash = newPasswordHash
            } else if update.password != nil {
                throw .invalid("password", "must not be empty for a password group")
            } else if group.type != .password || hash == nil {
                throw .invalid("password", "is required when the type becomes password")
            }
        } else {
            if newPasswordHash != nil { throw .invalid("password", "only password groups have a password") }
            hash = nil
        }
        group.type = newType
        if let name = update.name { group.name = name }
        if let icon = update.icon { group.icon = icon }
        if let description = update.description { group.description = description }
        if let metadata = update.metadata { group.metadata = metadata }
        if let tags = update.tags { group.tags = tags }
        if let joinRequests = update.joinRequests { group.joinRequests = joinRequests }
        guard group != before.group || hash != before.passwordHash else { return access.view() }
        group.updatedAt = now
        group.version += 1
        access.stored.group = group
        access.stored.passwordHash = hash
        try tx.updateGroup(&access.stored, descriptive: true)
        _ = try record(.updated, on: nil, group: access.stored)
        return access.view()
    }
}
