/// Reads of the moderation data, all from one consistent snapshot.
///
/// A snapshot is handed to a closure by `ModerationStore.read` (or is the transaction itself on
/// the writer) and must not escape it. Every method is keyed by the app's store key, so one
/// tenant's data is never reachable with another's. Failures of the storage itself are thrown as
/// `ModerationError` with code `.internal`, or `.storeUnavailable` when a store on a server cannot
/// reach it.
public protocol StoreSnapshot {
    /// The store's key of an app, or nil when the app has no data yet.
    func appID(named app: String) throws(ModerationError) -> Int64?

    /// A user by uid; nil also for a deleted user (see `uidRetired`).
    func user(appID: Int64, uid: String) throws(ModerationError) -> StoredUser?

    /// True when `uid` belonged to a user who was deleted: its tombstone keeps the uid from ever
    /// being used again.
    func uidRetired(appID: Int64, uid: String) throws(ModerationError) -> Bool

    /// A group by guid.
    func group(appID: Int64, guid: String) throws(ModerationError) -> StoredGroup?

    /// A user's membership row in a group, with its mute (expired or not: the rules decide).
    func membership(groupID: Int64, uid: String) throws(ModerationError) -> Membership?

    /// A group by guid with `uid`'s membership in it: what every read about a group asks first
    /// (`GroupAccess`). A store whose reads cost a round trip each answers both in one; the
    /// default asks `group` and `membership`.
    func groupAndMembership(appID: Int64, guid: String, uid: String) throws(ModerationError)
        -> (group: StoredGroup, membership: Membership?)?

    /// A user's ban record in a group, whether or not it has expired (the rules decide).
    func ban(groupID: Int64, uid: String) throws(ModerationError) -> Ban?

    /// The ban of `uid` from the app, in force or past its expiry (the rules decide), as every
    /// call made on behalf of a user checks it: answered from memory where the store can, and
    /// cheaply when the app has banned nobody. Nil when the user has none.
    func appBanStanding(appID: Int64, uid: String) throws(ModerationError) -> AppBanStanding?

    /// The ban of `uid` from the app with the user's profile, in force or past its expiry.
    func appBan(appID: Int64, uid: String) throws(ModerationError) -> AppBan?

    /// A page of the app's bans in force, sorted by (bannedAt descending, uid), with profiles.
    func appBans(appID: Int64, query: BanPageQuery) throws(ModerationError) -> [AppBan]

    /// A user's invite to a group, live or past its expiry (the rules decide), with the
    /// invitee's profile.
    func invite(groupID: Int64, uid: String) throws(ModerationError) -> Invite?

    /// A page of a group's live invites, sorted by (invitedAt descending, uid), with profiles.
    func invites(groupID: Int64, query: InvitePageQuery) throws(ModerationError) -> [Invite]

    /// A page of `uid`'s live invites across the app's groups, sorted by (invitedAt descending,
    /// guid).
    func invitesOf(appID: Int64, uid: String, query: InvitePageQuery) throws(ModerationError) -> [InviteListing]

    /// A user's pending request to join a group, with the user's profile.
    func joinRequest(groupID: Int64, uid: String) throws(ModerationError) -> JoinRequest?

    /// A page of a group's pending join requests, sorted by (requestedAt, uid), with profiles.
    func joinRequests(groupID: Int64, query: JoinRequestPageQuery) throws(ModerationError) -> [JoinRequest]

    /// How many join requests a group has pending.
    func pendingJoinRequestCount(groupID: Int64) throws(ModerationError) -> Int

    /// A report of the group by id.
    func report(groupID: Int64, id: UInt64) throws(ModerationError) -> Report?

    /// The open report `reporter` filed about `target` in the group, if any.
    func openReport(groupID: Int64, reporter: String, target: String) throws(ModerationError) -> Report?

    /// A page of the group's open or resolved reports, oldest first.
    func reports(groupID: Int64, query: ReportPageQuery) throws(ModerationError) -> [Report]

    /// How many open (or resolved) reports the group has about each target.
    func reportCounts(groupID: Int64, open: Bool) throws(ModerationError) -> [String: Int]

    /// How many reports `reporter` filed in the app at or after `since`.
    func reportsFiled(appID: Int64, reporter: String, since: Int64) throws(ModerationError) -> Int

    /// A page of a group's members sorted by (joinedAt, uid), with each member's profile.
    func members(groupID: Int64, query: MemberPageQuery) throws(ModerationError) -> [Member]

    /// A page of a group's bans in force, sorted by (bannedAt descending, uid).
    func bans(groupID: Int64, query: BanPageQuery) throws(ModerationError) -> [Ban]

    /// A page of the groups a viewer may see, sorted by (createdAt, guid).
    func groups(appID: Int64, query: GroupPageQuery) throws(ModerationError) -> [GroupListing]

    /// A slice of the action log in seq order, with users and group snapshots resolved.
    func actions(appID: Int64, query: ActionLogQuery) throws(ModerationError) -> [ActionRecord]

    /// True when the group's retained log has an action whose target is `uid`.
    func hasActions(groupID: Int64, on uid: String) throws(ModerationError) -> Bool

    /// The retained range of the app's log.
    func logBounds(appID: Int64) throws(ModerationError) -> LogBounds

    /// The guids of the groups `uid` is a member of now, sorted.
    func groupsOf(appID: Int64, uid: String) throws(ModerationError) -> [String]

    /// The guids of the groups that hold a ban row of `uid` (expired or not), sorted.
    func groupsBanning(appID: Int64, uid: String) throws(ModerationError) -> [String]

    /// For each check (guid and uid already validated), what `CheckPost` decides from, the user's
    /// ban from the app included: nil when the app has no such group. The answers come in the
    /// order of `checks`.
    func postingStandings(appID: Int64, checks: [PostCheck]) throws(ModerationError) -> [PostingStanding?]

    /// A page of a content rule set (`guid` empty: the app's), by id, after `afterID`.
    func contentRules(appID: Int64, guid: String, afterID: UInt64, limit: Int) throws(ModerationError) -> [ContentRule]

    /// How many rules a content rule set holds.
    func contentRuleCount(appID: Int64, guid: String) throws(ModerationError) -> Int

    /// The rule `id` of a set, if the set holds it.
    func contentRule(appID: Int64, guid: String, id: UInt64) throws(ModerationError) -> ContentRule?

    /// The rule of a set with this kind and pattern (as written), if any.
    func contentRule(appID: Int64, guid: String, kind: ContentRuleKind, pattern: String) throws(ModerationError)
        -> ContentRule?

    /// The version of every content rule set of every app: what a server compares with the sets
    /// it has compiled, to pick up changes other servers made.
    func contentRuleSetVersions() throws(ModerationError) -> [ContentRuleSetVersion]

    /// The app's webhooks, oldest first.
    func webhooks(appID: Int64) throws(ModerationError) -> [StoredWebhook]

    /// Every webhook of every app, enabled or not: what delivery works through (and reports).
    func allWebhooks() throws(ModerationError) -> [StoredWebhook]

    /// The reply stored under an idempotency key at or after `notBefore`, if any.
    func idempotentReply(appID: Int64, actor: String, key: String, notBefore: Int64) throws(ModerationError) -> [UInt8]?
}

extension StoreSnapshot {
    public func groupAndMembership(appID: Int64, guid: String, uid: String) throws(ModerationError)
        -> (group: StoredGroup, membership: Membership?)?
    {
        guard let group = try group(appID: appID, guid: guid) else { return nil }
        return (group, try membership(groupID: group.id, uid: uid))
    }
}
