import ThreadSupport

extension ModerationService {
    /// Joins a public group, or a password group with its password (`JoinGroup`).
    ///
    /// Order: arguments (the app cannot join) → group exists → the actor exists
    /// (`ERR_UID_NOT_FOUND`) → not a member (`ERR_ALREADY_JOINED`) → not banned
    /// (`ERR_BANNED_GROUPMEMBER`) → type: private `ERR_GROUP_JOIN_NOT_ALLOWED`; password
    /// `ERR_EMPTY_GROUP_PASS` / `ERR_WRONG_GROUP_PASS`.
    ///
    /// The password is verified on the calling thread against a snapshot of the group's hash;
    /// the writer only checks that the hash is still the same (if it changed in between, the
    /// verification runs again on a helper thread).
    ///
    /// The wrong-password limit refuses every join of the group by a user over it. With a
    /// password it is checked on the calling thread, before a slow hash is spent on another
    /// guess; without one there is no hash to spare, and the writer checks it first thing
    /// (`PendingMutation`'s admission), where a shared ledger has been read ahead with the batch.
    public func joinGroup(
        _ caller: Caller, guid: String, password: String = "", replay: @escaping ReplayEncoder<GroupActionResult>,
        completion: @escaping @Sendable (MutationResult<GroupActionResult>) -> Void
    ) {
        let key = (try? ValidatedCaller(caller).requireUser(), try? Validation.identifier(guid, field: "guid"))
        guard let uid = key.0, let normalized = key.1 else {
            join(caller, guid: guid, password: password, attempt: 0, replay: replay, completion: completion)
            return
        }
        let attemptKey = PasswordAttemptKey(app: caller.app, guid: normalized, uid: uid)
        let attempts = passwordAttempts
        let clock = self.clock
        guard !password.isEmpty else {
            // What the admission found, for a successful join to clear.
            let seen = ConditionLock(PasswordFailures(count: 0, first: nil))
            let admission: PendingMutation<GroupActionResult>.Admission = { transaction, now throws(ModerationError) in
                let failures = try attempts.failures(attemptKey, now: now, in: transaction)
                if let waitMs = attempts.retryAfter(failures, now: now) {
                    throw PasswordAttemptLimiter.refusal(attemptKey, waitMs: waitMs)
                }
                seen.withLock { $0 = failures }
            }
            join(caller, guid: guid, password: password, attempt: 0, replay: replay, admission: admission) {
                outcome in
                if case .done(.success, _) = outcome {
                    return attempts.recordSuccess(attemptKey, seen: seen.withLock { $0 }) { completion(outcome) }
                }
                completion(outcome)
            }
            return
        }
        let now = clock()
        let seen: PasswordFailures
        do throws(ModerationError) {
            seen = try attempts.failures(attemptKey, now: now)
        } catch {
            completion(.done(.failure(error)))
            return
        }
        if let waitMs = attempts.retryAfter(seen, now: now) {
            completion(.done(.failure(PasswordAttemptLimiter.refusal(attemptKey, waitMs: waitMs))))
            return
        }
        join(caller, guid: guid, password: password, attempt: 0, replay: replay) { outcome in
            // The reply waits for the record, so a retry made on receiving it (through any
            // instance) already counts this wrong password.
            if case .done(let result, _) = outcome {
                switch result {
                case .failure(let error) where error.code == .wrongGroupPass:
                    return attempts.recordFailure(attemptKey, now: clock()) { completion(outcome) }
                case .success:
                    return attempts.recordSuccess(attemptKey, seen: seen) { completion(outcome) }
                default:
                    break
                }
            }
            completion(outcome)
        }
    }

    private func join(
        _ caller: Caller, guid rawGUID: String, password: String, attempt: Int,
        replay: @escaping ReplayEncoder<GroupActionResult>,
        admission: PendingMutation<GroupActionResult>.Admission? = nil,
        completion: @escaping @Sendable (MutationResult<GroupActionResult>) -> Void
    ) {
        let hasher = configuration.passwordHasher
        let retry: @Sendable () -> Void = { [self] in
            WorkerThread.detached(name: "mod-join-retry") {
                self.join(
                    caller, guid: rawGUID, password: password, attempt: attempt + 1, replay: replay,
                    admission: admission, completion: completion)
            }
        }
        submit(
            caller, touching: (rawGUID, []), replay: replay, completion: completion, retry: retry, admission: admission
        ) {
            () throws(ModerationError) -> WriteBody<GroupActionResult> in
            let actor = try ValidatedCaller(caller).requireUser()
            let guid = try Validation.identifier(rawGUID, field: "guid")
            try Validation.text(password, field: "password", max: Validation.maxName * 10)
            // The last attempt verifies on the writer, so a group whose password keeps changing
            // still gets an answer.
            let verifyOnWriter = attempt >= 3
            let proof = verifyOnWriter ? nil : passwordProof(caller, guid: guid, password: password, hasher: hasher)
            return { (context: inout WriteContext) throws(ModerationError) -> GroupActionResult in
                var access = try context.access(guid)
                let user = try context.requireUser(actor)
                if access.actorMembership != nil { throw .alreadyJoined(actor, guid) }
                let banned = try context.banState(access, uid: actor)
                if banned.active != nil { throw .bannedGroupMember(actor, guid) }
                switch access.stored.group.type {
                case .public:
                    break
                case .private:
                    throw ModerationError(
                        .groupJoinNotAllowed, "group \(guid) is private; members are added by its admins")
                case .password:
                    guard !password.isEmpty else {
                        throw ModerationError(.emptyGroupPass, "group \(guid) needs a password")
                    }
                    let current = access.stored.passwordHash ?? ""
                    let matches: Bool
                    if verifyOnWriter {
                        matches = hasher.verify(password, against: current)
                    } else if let proof, PasswordHasher.sameHash(proof.hash, current) {
                        matches = proof.matches
                    } else {
                        throw ModerationError(.passwordChanged, "the password of group \(guid) changed during the join")
                    }
                    guard matches else { throw ModerationError(.wrongGroupPass, "wrong password for group \(guid)") }
                }
                try context.expire(banned, in: &access)
                let membership = Membership(scope: .participant, joinedAt: context.now)
                try context.tx.insertMember(groupID: access.groupID, user: user, membership: membership)
                access.stored.group.membersCount += 1
                access.stored.group.version += 1
                let action = try context.record(.joined, on: user.user, group: access.stored, newScope: .participant)
                try context.saveCounters(&access)
                let view = GroupView(
                    group: Redaction.group(access.stored.group, for: .participant), hasJoined: true,
                    scope: .participant, joinedAt: context.now)
                return GroupActionResult(action: action, group: view)
            }
        }
    }

    /// The password verified against the group's hash in a snapshot, on the calling thread.
    private func passwordProof(_ caller: Caller, guid: String, password: String, hasher: PasswordHasher)
        -> PasswordProof?
    {
        guard !password.isEmpty else { return nil }
        let hash = try? store.read { (snapshot: any StoreSnapshot) throws(ModerationError) -> String? in
            guard let appID = try snapshot.appID(named: caller.app) else { return nil }
            return try snapshot.group(appID: appID, guid: guid)?.passwordHash
        }
        guard let hash else { return nil }
        return PasswordProof(hash: hash, matches: hasher.verify(password, against: hash))
    }

    /// Leaves a group (`LeaveGroup`); the owner must transfer ownership first.
    ///
    /// Order: arguments (the app cannot leave) → group visible → member
    /// (`ERR_GROUP_NOT_JOINED`) → not the owner (`ERR_OWNER_CANNOT_LEAVE`).
    public func leaveGroup(
        _ caller: Caller, guid: String, replay: @escaping ReplayEncoder<ActionRecord>,
        completion: @escaping @Sendable (MutationResult<ActionRecord>) -> Void
    ) {
        submit(caller, touching: (guid, []), replay: replay, completion: completion) {
            () throws(ModerationError) -> WriteBody<ActionRecord> in
            let actor = try ValidatedCaller(caller).requireUser()
            let guid = try Validation.identifier(guid, field: "guid")
            return { (context: inout WriteContext) throws(ModerationError) -> ActionRecord in
                var access = try context.access(guid)
                try access.requireVisible()
                try access.requireMember()
                guard access.actorRank != .owner else {
                    throw ModerationError(.ownerCannotLeave, "\(actor) owns group \(guid); transfer ownership first")
                }
                let scope = access.actorMembership?.scope
                try context.tx.deleteMember(groupID: access.groupID, uid: actor)
                access.stored.group.membersCount -= 1
                access.stored.group.version += 1
                let action = try context.record(.left, on: context.actorUser(), group: access.stored, oldScope: scope)
                try context.saveCounters(&access)
                return action
            }
        }
    }

    /// Adds up to 100 users to a group (`AddMembers`): admins and moderators.
    ///
    /// A moderator may add participants; an admin participants and moderators; the owner and
    /// the app any scope. Per user: `ERR_UID_NOT_FOUND`, `ERR_ALREADY_JOINED`,
    /// `ERR_BANNED_GROUPMEMBER` (adding never unbans), `ERR_PERMISSION_DENIED`.
    public func addMembers(
        _ caller: Caller, guid: String, members: [MemberGrant], replay: @escaping ReplayEncoder<AddMembersResult>,
        completion: @escaping @Sendable (MutationResult<AddMembersResult>) -> Void
    ) {
        submit(caller, replay: replay, completion: completion) {
            () throws(ModerationError) -> WriteBody<AddMembersResult> in
            let guid = try Validation.identifier(guid, field: "guid")
            let grants = try Validation.grants(members)
            return { (context: inout WriteContext) throws(ModerationError) -> AddMembersResult in
                var access = try context.moderatorAccess(guid, toDo: "add members to the group")
                let results = try context.forEachTarget(grants, uid: \.uid, on: &access) {
                    (context: inout WriteContext, access: inout GroupAccess, grant: MemberGrant) throws(ModerationError)
                        -> UserResult in
                    try context.addOne(&access, grant)
                }
                return AddMembersResult(results: results, group: access.view())
            }
        }
    }

    /// Lists a group's members (`ListMembers`), sorted by (joinedAt, uid): members and the app.
    ///
    /// Each member shows their mute in force (its reason to admins, moderators and the app only);
    /// `mutedOnly` keeps the members muted now.
    public func listMembers(_ caller: Caller, guid: String, options: ListMembersOptions = ListMembersOptions())
        throws(ModerationError) -> Page<Member>
    {
        let guid = try Validation.identifier(guid, field: "guid")
        let limit = try Validation.limit(options.limit)
        let after = try Cursor.memberKey(options.cursor)
        let search = try Validation.search(options.search)
        let epoch = memberPages.profileEpoch // before the snapshot: see MemberPageCache
        return try read(caller) { (context: ReadContext) throws(ModerationError) -> Page<Member> in
            let access = try context.access(guid)
            try access.requireVisible()
            try access.requireMember()
            let version = access.stored.group.version
            // The cache holds pages as stored; what a reader sees of a mute depends on who and when
            // (a page without one is handed out as it is: most are).
            let seen = { (page: Page<Member>) -> Page<Member> in
                guard page.items.contains(where: { $0.mute != nil }) else { return page }
                return Page(
                    items: page.items.map { Redaction.member($0, for: access.actorRank, at: context.now) },
                    nextCursor: page.nextCursor)
            }
            let query = MemberPageQuery(
                after: after, scopes: options.scopes, search: search, limit: limit + 1,
                mutedAt: options.mutedOnly ? context.now : nil)
            let cacheable = query.isWholeFirstPage
            if cacheable,
                let cached = memberPages.page(groupID: access.groupID, version: version, epoch: epoch, limit: limit)
            {
                return seen(cached)
            }
            let rows = try context.snapshot.members(groupID: access.groupID, query: query)
            let page = Page(rows: rows, limit: limit) { Cursor.encode(MemberKey(joinedAt: $0.joinedAt, uid: $0.uid)) }
            if cacheable {
                memberPages.store(page, groupID: access.groupID, version: version, epoch: epoch, limit: limit)
            }
            return seen(page)
        }
    }

    /// Reads one user's membership, mute and ban state in a group (`GetMemberState`): the user
    /// itself, admins, moderators and the app. `uid` nil or empty means the acting user. The
    /// mute's reason is shown to admins, moderators and the app only.
    ///
    /// Order: arguments → group visible → (for another user) actor member → actor admin or
    /// moderator → user exists.
    public func getMemberState(_ caller: Caller, guid: String, uid: String? = nil) throws(ModerationError)
        -> MemberState
    {
        let guid = try Validation.identifier(guid, field: "guid")
        let named = try uid.flatMap { (uid: String) throws(ModerationError) -> String? in
            uid.isEmpty ? nil : try Validation.identifier(uid, field: "uid")
        }
        return try read(caller) { (context: ReadContext) throws(ModerationError) -> MemberState in
            guard let target = named ?? context.caller.actor else {
                throw .invalid("uid", "is required when the app asks")
            }
            let access = try context.access(guid)
            try access.requireVisible()
            if target != context.caller.actor {
                try access.requireMember()
                try access.requireRank(.moderator, toDo: "read the state of other members")
            }
            guard let appID = try context.appID(), try context.snapshot.user(appID: appID, uid: target) != nil else {
                throw .uidNotFound(target)
            }
            let membership = try context.snapshot.membership(groupID: access.groupID, uid: target)
            let ban = try context.activeBan(groupID: access.groupID, uid: target)
            return MemberState(
                isMember: membership != nil, scope: membership?.scope, joinedAt: membership?.joinedAt ?? 0,
                isOwner: target == access.stored.group.owner, isBanned: ban != nil, ban: ban,
                groupVersion: access.stored.group.version,
                mute: Redaction.mute(membership?.mute, for: access.actorRank, at: context.now))
        }
    }
}
