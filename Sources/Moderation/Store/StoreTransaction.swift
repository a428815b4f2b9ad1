/// Reads and writes inside one atomic change, on the store's writer.
///
/// What a store must guarantee (the SQLite store does it with one writer thread; the PostgreSQL
/// store with the app's row lock, taken by each write's first step, in a `READ COMMITTED`
/// transaction):
/// - **Atomicity**: everything a `StoreWrite` does is kept or dropped together; `savepoint`
///   nests a smaller unit that can be dropped alone.
/// - **Per-group serialization**: after `groupForUpdate`, no other change to that group can
///   interleave until this one commits or rolls back (PostgreSQL: the group's app's row lock,
///   which every change of the app takes first).
/// - **Gapless seqs**: `appendAction` allocates the app's next seq inside the change, so a
///   rolled-back change burns none and readers never see a gap (PostgreSQL: counted from the
///   head read under the app's row lock, which also orders the app's commits).
public protocol StoreTransaction: StoreSnapshot {
    /// Runs `body` in a nested savepoint: when it throws, what it wrote is rolled back and the
    /// error is rethrown; the enclosing change goes on.
    func savepoint<T>(_ body: () throws(ModerationError) -> T) throws(ModerationError) -> T

    /// The app's key, creating the app on first use.
    func createApp(named app: String) throws(ModerationError) -> Int64

    /// The group by guid, locked against concurrent changes until this change ends.
    func groupForUpdate(appID: Int64, guid: String) throws(ModerationError) -> StoredGroup?

    func insertUser(appID: Int64, _ user: User) throws(ModerationError) -> StoredUser
    /// Replaces the user's name, avatar and metadata.
    func updateUser(_ user: StoredUser) throws(ModerationError)
    /// Deletes a user who is in no group any more: erases the profile (name, avatar, metadata),
    /// keeps the uid as a tombstone (`uidRetired`; `user(appID:uid:)` finds it no more), and
    /// removes every row that exists only for the user. This is the one place a user's own rows
    /// go: a table of pending rows per user (invites, join requests) is emptied here too.
    func deleteUser(_ user: StoredUser, at time: Int64) throws(ModerationError)

    /// Inserts a group (revision 1) and returns it with its new key.
    func insertGroup(appID: Int64, _ group: Group, passwordHash: String?) throws(ModerationError) -> StoredGroup
    /// Writes the group's counters; with `descriptive`, also its other fields and password hash,
    /// bumping `group.revision` and recording the new revision for the action log.
    func updateGroup(_ group: inout StoredGroup, descriptive: Bool) throws(ModerationError)
    /// Deletes the group with its members and bans; its revisions stay for the action log.
    func deleteGroup(_ group: StoredGroup, at time: Int64) throws(ModerationError)

    /// The wrong passwords of `key` after `cutoff` in the store's shared ledger
    /// (`ModerationStore.passwordAttempts`), as this change sees it; nil for a store without one,
    /// whose limit the service counts in memory. A join without a password checks the limit here,
    /// inside its write, where PostgreSQL's writer has read the ledger ahead with the batch's
    /// other rows: no round trip, and no worker, for the commonest join.
    func sharedPasswordFailures(_ key: PasswordAttemptKey, after cutoff: Int64) throws(ModerationError)
        -> PasswordFailures?

    /// Inserts a member. A member is never invited nor requesting: any invite of the user to the
    /// group and any join request of theirs goes (accepted or approved, or the user joined or was
    /// added another way).
    func insertMember(groupID: Int64, user: StoredUser, membership: Membership) throws(ModerationError)
    func deleteMember(groupID: Int64, uid: String) throws(ModerationError)
    func setMemberScope(groupID: Int64, uid: String, scope: Scope) throws(ModerationError)
    /// Sets (or, with nil, lifts) a member's mute.
    func setMemberMute(groupID: Int64, uid: String, mute: Mute?) throws(ModerationError)
    /// Up to `limit` mutes, across apps, whose expiry is at or before `now`. A store several
    /// servers share returns only mutes of apps this transaction holds or could lock now, so
    /// each expiry is recorded once however many sweep (as `expiredBans`).
    func expiredMutes(at now: Int64, limit: Int) throws(ModerationError) -> [ExpiredEntry]

    /// Inserts a ban record (its `name` and `avatar` are ignored: they come from the user). A
    /// banned user is never invited nor requesting: any invite of the user to the group and any
    /// join request of theirs goes.
    func insertBan(groupID: Int64, user: StoredUser, ban: Ban) throws(ModerationError)
    func deleteBan(groupID: Int64, uid: String) throws(ModerationError)
    /// Up to `limit` bans, across apps, whose expiry is at or before `now`.
    func expiredBans(at now: Int64, limit: Int) throws(ModerationError) -> [ExpiredEntry]

    /// Inserts a ban from the app (its `name` and `avatar` are ignored: they come from the user).
    /// Memberships, group bans and everything else of the user stay as they are.
    func insertAppBan(appID: Int64, user: StoredUser, ban: AppBan) throws(ModerationError)
    func deleteAppBan(appID: Int64, uid: String) throws(ModerationError)
    /// Up to `limit` app bans, across apps, whose expiry is at or before `now` (their `guid` is
    /// empty). A store several servers share returns only bans of apps this transaction holds or
    /// could lock now, as `expiredBans` does.
    func expiredAppBans(at now: Int64, limit: Int) throws(ModerationError) -> [ExpiredEntry]

    /// Inserts the invite of `user` to the group, or replaces the one there (a refresh); its
    /// `name` and `avatar` are ignored.
    func upsertInvite(groupID: Int64, user: StoredUser, invite: Invite) throws(ModerationError)
    func deleteInvite(groupID: Int64, uid: String) throws(ModerationError)
    /// Removes up to `limit` invites, across apps, whose expiry is at or before `now` (an expired
    /// invite is already "not found" to every call; this only reclaims its row); returns how many.
    func purgeExpiredInvites(at now: Int64, limit: Int) throws(ModerationError) -> Int

    /// Inserts a pending join request (its `name` and `avatar` are ignored).
    func insertJoinRequest(groupID: Int64, user: StoredUser, request: JoinRequest) throws(ModerationError)
    func deleteJoinRequest(groupID: Int64, uid: String) throws(ModerationError)

    /// Inserts a report (its `id` is ignored) and returns its new id. Reports stay when their
    /// reporter or target is deleted; they go with their group.
    func insertReport(appID: Int64, groupID: Int64, _ report: Report) throws(ModerationError) -> UInt64
    /// Writes a report's resolution, note, time and resolver.
    func resolveReport(groupID: Int64, _ report: Report) throws(ModerationError)

    /// Inserts a content rule (its `id` is ignored) and returns its new id, unique in the store
    /// and increasing.
    func insertContentRule(appID: Int64, _ rule: ContentRule) throws(ModerationError) -> UInt64
    func deleteContentRule(appID: Int64, id: UInt64) throws(ModerationError)
    /// Sets a rule set's version (the seq of the action that last changed it).
    func setContentRuleSetVersion(appID: Int64, guid: String, version: UInt64) throws(ModerationError)
    /// Deletes a rule set with its version: its group was deleted.
    func deleteContentRuleSet(appID: Int64, guid: String) throws(ModerationError)

    /// Inserts a webhook (its id is the caller's, unique in the store), with no lease.
    func insertWebhook(_ webhook: StoredWebhook) throws(ModerationError)
    /// Replaces everything of a webhook but its lease: settings, status, secret and generation.
    func updateWebhook(_ webhook: StoredWebhook) throws(ModerationError)
    func deleteWebhook(appID: Int64, id: String) throws(ModerationError)
    /// Takes or renews the lease of webhook `id` for `owner` until `expiresAt`, when it is free,
    /// expired at `now` or `owner`'s already; returns whether `owner` holds it now (false also
    /// when the webhook is gone).
    func claimWebhookLease(id: String, owner: String, now: Int64, expiresAt: Int64) throws(ModerationError) -> Bool
    /// Gives up every lease `owner` holds (a server shutting down), so others take over at once.
    func releaseWebhookLeases(owner: String) throws(ModerationError)
    /// Records a delivery's outcome (status and `enabled`) when `owner` still holds the lease of
    /// webhook `id` and its generation is still `generation`; returns whether it did.
    func recordWebhookDelivery(
        id: String, owner: String, generation: UInt64, status: WebhookStatus, enabled: Bool
    ) throws(ModerationError) -> Bool

    /// Appends `action` to its app's log with the app's next seq (set into `action.seq`);
    /// `group` is the state the action's snapshot shows.
    func appendAction(_ action: inout ActionRecord, appID: Int64, group: StoredGroup) throws(ModerationError)

    /// Stores the reply of an idempotent call (replacing an older one under the same key).
    func saveIdempotentReply(appID: Int64, actor: String, key: String, reply: [UInt8], at time: Int64)
        throws(ModerationError)

    /// Removes up to `limit` of the oldest actions (per app, a prefix of its log) older than
    /// `cutoff`, and group revisions no retained action can refer to; returns how many actions.
    func pruneActions(before cutoff: Int64, limit: Int) throws(ModerationError) -> Int
    /// Removes up to `limit` idempotency replies stored before `cutoff`; returns how many.
    func purgeIdempotentReplies(before cutoff: Int64, limit: Int) throws(ModerationError) -> Int
}
