extension ModerationService {
    /// Creates a group (`CreateGroup`); the owner becomes a member with scope admin.
    ///
    /// A user creates groups they own (naming another owner: `ERR_PERMISSION_DENIED`); the app
    /// must name the owner. Order: arguments → owner allowed → guid free
    /// (`ERR_GUID_ALREADY_EXISTS`) → owner exists (`ERR_UID_NOT_FOUND`). Then each initial member
    /// and ban gets its own result (`ERR_UID_NOT_FOUND`; `ERR_ALREADY_JOINED` for the owner listed
    /// as a member). Actions: `created` (on the owner), then `added` per member, `banned` per ban.
    public func createGroup(
        _ caller: Caller, _ request: NewGroup, replay: @escaping ReplayEncoder<CreateGroupResult>,
        completion: @escaping @Sendable (MutationResult<CreateGroupResult>) -> Void
    ) {
        let hasher = configuration.passwordHasher
        submit(caller, replay: replay, completion: completion) {
            () throws(ModerationError) -> WriteBody<CreateGroupResult> in
            let plan = try CreateGroupPlan(request, actor: ValidatedCaller(caller).actor)
            let passwordHash = request.type == .password ? try hasher.hash(request.password) : nil
            return { (context: inout WriteContext) throws(ModerationError) -> CreateGroupResult in
                try context.createGroup(plan, passwordHash: passwordHash)
            }
        }
    }

    /// Reads a group as the acting user sees it (`GetGroup`).
    ///
    /// A banned user gets `ERR_BANNED_GROUPMEMBER` (any type); a non-member asking for a private
    /// group gets `ERR_GROUP_NOT_FOUND`, unless they hold a live invite to it.
    public func getGroup(_ caller: Caller, guid: String) throws(ModerationError) -> GroupView {
        let guid = try Validation.identifier(guid, field: "guid")
        return try read(caller) { (context: ReadContext) throws(ModerationError) -> GroupView in
            let access = try context.access(guid)
            // A member is never banned (an invariant), so only non-members need the ban lookup.
            if let actor = context.caller.actor, access.actorMembership == nil,
                try context.activeBan(groupID: access.groupID, uid: actor) != nil
            {
                throw .bannedGroupMember(actor, guid)
            }
            // A private group is visible to a non-member while they hold a live invite to it.
            if access.stored.group.type == .private, access.actorRank == .nonMember, let actor = context.caller.actor,
                let invite = try context.snapshot.invite(groupID: access.groupID, uid: actor),
                invite.isLive(at: context.now)
            {
                return access.view()
            }
            try access.requireVisible()
            return access.view()
        }
    }

    /// Changes a group's fields (`UpdateGroup`): admins and moderators; `type` and `password`
    /// admins only.
    ///
    /// Order: arguments → group visible → actor member → scope (`ERR_PERMISSION_DENIED`) →
    /// `ifVersion` (`ERR_VERSION_CONFLICT`) → arguments that depend on the group (a new password
    /// type needs a password). An update that changes nothing records nothing.
    public func updateGroup(
        _ caller: Caller, _ update: GroupUpdate, replay: @escaping ReplayEncoder<GroupView>,
        completion: @escaping @Sendable (MutationResult<GroupView>) -> Void
    ) {
        let hasher = configuration.passwordHasher
        submit(caller, replay: replay, completion: completion) { () throws(ModerationError) -> WriteBody<GroupView> in
            let guid = try Validation.identifier(update.guid, field: "guid")
            guard !update.isEmpty else { throw .invalid("update_mask", "names no field to change") }
            if let name = update.name { try Validation.text(name, field: "name", max: Validation.maxName, min: 1) }
            if let icon = update.icon { try Validation.text(icon, field: "icon", max: Validation.maxURL) }
            if let description = update.description {
                try Validation.text(description, field: "description", max: Validation.maxDescription)
            }
            if let metadata = update.metadata { try Validation.metadata(metadata) }
            if let tags = update.tags { try Validation.tags(tags) }
            if let password = update.password {
                try Validation.text(password, field: "password", max: Validation.maxName * 10)
            }
            if let type = update.type, type != .password, let password = update.password, !password.isEmpty {
                throw .invalid("password", "only password groups have a password")
            }
            let newHash = try update.password.flatMap { (password: String) throws(ModerationError) -> String? in
                password.isEmpty ? nil : try hasher.hash(password)
            }
            return { (context: inout WriteContext) throws(ModerationError) -> GroupView in
                try context.updateGroup(guid: guid, update, newPasswordHash: newHash)
            }
        }
    }

    /// Deletes a group with its members, bans and content rules (`DeleteGroup`): the owner or the
    /// app.
    ///
    /// Records one `deleted` action whose snapshot is the group as it was before deletion.
    public func deleteGroup(
        _ caller: Caller, guid: String, replay: @escaping ReplayEncoder<ActionRecord>,
        completion: @escaping @Sendable (MutationResult<ActionRecord>) -> Void
    ) {
        submit(caller, replay: replay, completion: completion) {
            () throws(ModerationError) -> WriteBody<ActionRecord> in
            let guid = try Validation.identifier(guid, field: "guid")
            return { (context: inout WriteContext) throws(ModerationError) -> ActionRecord in
                let access = try context.access(guid)
                try access.requireVisible()
                try access.requireMember()
                try access.requireRank(.owner, toDo: "delete the group")
                let action = try context.record(.deleted, on: nil, group: access.stored)
                try context.tx.deleteGroup(access.stored, at: context.now)
                if let appID = try context.appID() {
                    try context.tx.deleteContentRuleSet(appID: appID, guid: guid)
                }
                return action
            }
        }
    }

    /// Lists the groups the acting user may see (`ListGroups`), sorted by (createdAt, guid).
    ///
    /// Visible: public and password groups, and private groups the user is a member of; groups
    /// the user is banned from now are left out. The app sees every group.
    public func listGroups(_ caller: Caller, options: ListGroupsOptions = ListGroupsOptions()) throws(ModerationError)
        -> Page<GroupView>
    {
        let limit = try Validation.limit(options.limit)
        let after = try Cursor.groupKey(options.cursor)
        let search = try Validation.search(options.search)
        for tag in options.tags { try Validation.text(tag, field: "tags", max: Validation.maxTag, min: 1) }
        guard options.tags.count <= Validation.maxBatch else {
            throw .invalid("tags", "at most \(Validation.maxBatch) tags")
        }
        return try read(caller) { (context: ReadContext) throws(ModerationError) -> Page<GroupView> in
            guard let appID = try context.appID() else { return .empty }
            let query = GroupPageQuery(
                viewer: context.caller.actor, after: after, search: search, joinedOnly: options.joinedOnly,
                types: options.types, tags: options.tags, limit: limit + 1, now: context.now)
            let rows = try context.snapshot.groups(appID: appID, query: query)
            return Page(
                rows: rows, limit: limit,
                item: { listing in
                    let rank: Rank = context.caller.actor == nil ? .app : listing.membership?.scope.rank ?? .nonMember
                    return GroupView(
                        group: Redaction.group(listing.group.group, for: rank), hasJoined: listing.membership != nil,
                        scope: listing.membership?.scope, joinedAt: listing.membership?.joinedAt ?? 0)
                },
                cursor: { Cursor.encode(GroupKey(createdAt: $0.group.createdAt, guid: $0.group.guid)) })
        }
    }
}
