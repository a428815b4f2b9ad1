/// What a mutation needs on the writer: the transaction, the validated caller, the time of the
/// change, and helpers that keep the action log and the group's counters right.
///
/// Every mutation runs all its checks before its first write, so one that fails has written
/// nothing; the store relies on that to skip a savepoint per write (and still rolls back, at a
/// higher cost, a write that breaks the rule).
struct WriteContext {
    let tx: any StoreTransaction
    let caller: ValidatedCaller
    let now: Int64
    private var knownAppID: Int64?
    private var knownActor: User?

    init(tx: any StoreTransaction, caller: ValidatedCaller, now: Int64) {
        self.tx = tx
        self.caller = caller
        self.now = now
    }

    /// The caller's app key, or nil when the app has no data yet.
    mutating func appID() throws(ModerationError) -> Int64? {
        if let knownAppID { return knownAppID }
        knownAppID = try tx.appID(named: caller.app)
        return knownAppID
    }

    /// The caller's app key, creating the app on its first write.
    mutating func ensureAppID() throws(ModerationError) -> Int64 {
        if let knownAppID { return knownAppID }
        let id = try tx.createApp(named: caller.app)
        knownAppID = id
        return id
    }

    /// Step 2 for writes: the group, locked for the change, and the actor's standing in it.
    mutating func access(_ guid: String) throws(ModerationError) -> GroupAccess {
        try GroupAccess.load(tx, appID: appID(), guid: guid, caller: caller, lock: tx)
    }

    /// The step after the arguments, for every write on behalf of a user: the acting user is not
    /// banned from the app (`ERR_USER_BANNED_FROM_APP`), as `ReadContext.requireNotBannedFromApp`.
    mutating func requireNotBannedFromApp() throws(ModerationError) {
        guard let actor = caller.actor, let appID = try appID(),
            let ban = try tx.appBanStanding(appID: appID, uid: actor), ban.blocks(at: now)
        else { return }
        throw .bannedFromApp(actor)
    }

    /// Step 5: the user `uid` exists in the caller's app.
    mutating func requireUser(_ uid: String) throws(ModerationError) -> StoredUser {
        guard let appID = try appID(), let user = try tx.user(appID: appID, uid: uid) else { throw .uidNotFound(uid) }
        return user
    }

    /// The acting user as actions show them (`User.app` for the app).
    mutating func actorUser() throws(ModerationError) -> User {
        if let knownActor { return knownActor }
        var user = User.app
        if let actor = caller.actor, let appID = try appID(), let stored = try tx.user(appID: appID, uid: actor) {
            user = stored.user
        } else if let actor = caller.actor {
            user = User(uid: actor)
        }
        knownActor = user
        return user
    }

    /// Appends an action showing `group` as it is now (`StoredGroup.appWide` for an action of the
    /// whole app), by the actor unless `by` says otherwise.
    ///
    /// The snapshot leaves out the reason of a freeze: actions go to every member, and the log
    /// keeps no such reason (the `frozen` action itself carries it).
    mutating func record(
        _ kind: ActionKind, on target: User?, group: StoredGroup, by: User? = nil, oldScope: Scope? = nil,
        newScope: Scope? = nil, reason: String = "", expiresAt: Int64 = 0, reportID: UInt64 = 0, shadow: Bool = false,
        rulesAdded: Int = 0, rulesRemoved: Int = 0
    ) throws(ModerationError) -> ActionRecord {
        let actor: User
        if let by {
            actor = by
        } else {
            actor = try actorUser()
        }
        var snapshot = group.group
        if !snapshot.frozenReason.isEmpty { snapshot.frozenReason = "" }
        var action = ActionRecord(
            app: caller.app, kind: kind, actionBy: actor, actionOn: target, group: snapshot, oldScope: oldScope,
            newScope: newScope, reason: reason, expiresAt: expiresAt, timestamp: now,
            idempotencyKey: caller.idempotencyKey, requestID: caller.requestID, reportID: reportID, shadow: shadow,
            rulesAdded: rulesAdded, rulesRemoved: rulesRemoved)
        try tx.appendAction(&action, appID: ensureAppID(), group: group)
        return action
    }

    /// Writes the group's counters (members_count, version) after membership or ban changes.
    func saveCounters(_ access: inout GroupAccess) throws(ModerationError) {
        try tx.updateGroup(&access.stored, descriptive: false)
    }

    /// The ban of `uid` as the rules see it now.
    ///
    /// A ban past its expiry that the sweeper has not recorded yet does not apply; the caller
    /// converts it (`expire`) just before its own writes — after every check has passed, so a
    /// failing mutation writes nothing at all.
    func banState(_ access: GroupAccess, uid: String) throws(ModerationError) -> BanState {
        guard let ban = try tx.ban(groupID: access.groupID, uid: uid) else { return .none }
        return ban.isActive(at: now) ? .active(ban) : .expired(ban)
    }

    /// Converts an expired ban the change met: deletes its row and appends an `unbanned` action
    /// (reason "expired", by the app) before whatever the change records.
    mutating func expire(_ state: BanState, in access: inout GroupAccess) throws(ModerationError) {
        guard case .expired(let ban) = state else { return }
        try expire(ban, in: &access)
    }

    /// Deletes an expired ban and records its expiry; returns the `unbanned` action.
    @discardableResult
    mutating func expire(_ ban: Ban, in access: inout GroupAccess) throws(ModerationError) -> ActionRecord {
        try tx.deleteBan(groupID: access.groupID, uid: ban.uid)
        access.stored.group.version += 1
        var target = User(uid: ban.uid)
        if let appID = try appID(), let stored = try tx.user(appID: appID, uid: ban.uid) { target = stored.user }
        return try record(
            .unbanned, on: target, group: access.stored, by: .app, oldScope: ban.scopeBefore, reason: "expired")
    }
}
