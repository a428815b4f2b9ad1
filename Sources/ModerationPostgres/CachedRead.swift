internal import Moderation

/// One read of a call, answered from the `ReadCache` where it can be and from a `REPEATABLE READ`
/// transaction where it cannot.
///
/// The read takes one version of its app and keeps to it: cached answers only at the version a
/// check sent after the call arrived found (or a check of its own), and, once the read needs
/// PostgreSQL, its transaction's version. Both describe the app's data as committed at some
/// instant after the call arrived. When the transaction finds a newer version than cached
/// answers the read already gave, those answers and the transaction's would mix two states:
/// the read is marked `conflicted`, and `PostgresStore` runs it again from the start at the
/// transaction's version, where no further conflict can arise.
final class CachedRead: StoreSnapshot {
    // Invariant: used by the one thread running the read, from its start to `close`.
    private let cache: ReadCache
    private let appBanSets: AppBanSets
    private let readers: ReaderPool
    private let arrivedAt: UInt64
    /// The cache's generation when the read began: nothing the read learns is kept once the
    /// cache was cleared since.
    private let generation: UInt64
    /// `appBanSets`' generation when the read began, for what the read keeps there.
    private let appBansGeneration: UInt64
    /// The connection the read holds, once it needed one (checked in by `close`).
    private var session: PostgresSession?
    /// Whether `session` was an idle pooled connection (it may have died while idle).
    private(set) var sessionWasReused = false
    private var inTransaction = false
    /// When the transaction's first statement was sent.
    private var transactionStartedAt: UInt64 = 0
    /// The one app the read works in (the first it asks about) and its version for this read.
    private var appID: Int64?
    private var version: UInt64?
    /// The version of the app's bans from the app, read with `version`.
    private var appBansVersion: UInt64?
    private var answeredFromCache = false
    /// A cached answer and the transaction disagree: the read must run again (see the type).
    private(set) var conflicted = false

    init(cache: ReadCache, appBanSets: AppBanSets, readers: ReaderPool, arrivedAt: UInt64?) {
        self.cache = cache
        self.appBanSets = appBanSets
        self.readers = readers
        self.arrivedAt = arrivedAt ?? monotonicNanoseconds()
        generation = cache.generation
        appBansGeneration = appBanSets.generation
    }

    /// The read's connection broke (PostgreSQL went away).
    var isBroken: Bool { session?.connection.isBroken ?? false }

    /// Starts the read again at the version its transaction found: after a conflict.
    func restart() {
        answeredFromCache = false
        conflicted = false
    }

    /// Ends the transaction, if any, and returns the connection.
    func close() {
        guard let session else { return }
        if inTransaction { session.endRead() }
        readers.checkin(session)
        self.session = nil
        inTransaction = false
    }

    // MARK: Versions and the transaction

    private func connection() throws(ModerationError) -> PostgresSession {
        if let session { return session }
        let (checkedOut, reused) = try readers.checkout()
        session = checkedOut
        sessionWasReused = reused
        return checkedOut
    }

    /// The read's transaction, begun on first need; reads the app's version in its snapshot.
    private func transaction() throws(ModerationError) -> PostgresSession {
        let session = try connection()
        if inTransaction { return session }
        // The snapshot is taken at the transaction's first statement, sent after the call
        // arrived: a version read in it is a check other reads may use too.
        transactionStartedAt = monotonicNanoseconds()
        try session.beginRead()
        inTransaction = true
        if let appID {
            let found = try transactionVersion(of: appID)
            let changed = version != nil && version != found
            version = found
            if changed && answeredFromCache {
                conflicted = true
                throw .storage("the app changed during the read; it runs again")
            }
        }
        return session
    }

    /// The version the read answers `appID` at, or nil when it must not use the cache for it
    /// (the cache is off, or the read works in another app).
    private func cachedVersion(of appID: Int64) throws(ModerationError) -> UInt64? {
        guard cache.isEnabled else { return nil }
        if self.appID == nil { self.appID = appID }
        guard self.appID == appID else { return nil }
        if let version { return version }
        if inTransaction {
            version = try transactionVersion(of: appID)
        } else if let shared = cache.check(of: appID, since: arrivedAt) {
            version = shared.version
            appBansVersion = shared.appBansVersion
        } else {
            // The check is the transaction's first statement, in a round trip of its own: a read
            // that then misses goes on in the same transaction.
            _ = try transaction()
        }
        return version
    }

    /// The app's version in the transaction's snapshot, recorded as a check; the version of its
    /// bans from the app comes with it (`appBansVersion`): every change to them moves the
    /// app's version too.
    private func transactionVersion(of appID: Int64) throws(ModerationError) -> UInt64 {
        let row = try session!.connection.query(.appDataVersion, [.int(appID)])
        guard row.rowCount > 0 else { throw .storage("app \(appID) vanished") }
        let found = row.uint64(0, 0)
        appBansVersion = row.uint64(0, 1)
        cache.recordCheck(
            appID: appID, startedAt: transactionStartedAt, version: found, appBansVersion: row.uint64(0, 1),
            generation: generation)
        return found
    }

    /// An answer from the cache at the read's version, or read in the transaction and kept.
    private func cached<Value>(
        appID: Int64, find: (UInt64) -> Value?, load: (PostgresSession) throws(ModerationError) -> Value,
        keep: (Value, UInt64) -> Void
    ) throws(ModerationError) -> Value {
        guard let readVersion = try cachedVersion(of: appID) else { return try load(transaction()) }
        if let found = find(readVersion) {
            answeredFromCache = true
            return found
        }
        let session = try transaction()
        let value = try load(session)
        // The transaction's version: the same as before, unless nothing came from the cache.
        if let version { keep(value, version) }
        return value
    }

    // MARK: Answered from the cache

    func appID(named app: String) throws(ModerationError) -> Int64? {
        if let known = cache.appID(named: app) { return known }
        guard let found = try transaction().appID(named: app) else { return nil }
        cache.remember(appID: found, named: app, generation: generation)
        return found
    }

    func group(appID: Int64, guid: String) throws(ModerationError) -> StoredGroup? {
        try cached(
            appID: appID, find: { cache.group(appID: appID, guid: guid, version: $0) },
            load: { (session) throws(ModerationError) in try session.group(appID: appID, guid: guid) },
            keep: { cache.keep(group: $0, guid: guid, appID: appID, version: $1, generation: generation) })
    }

    func groupAndMembership(appID: Int64, guid: String, uid: String) throws(ModerationError)
        -> (group: StoredGroup, membership: Membership?)?
    {
        typealias Found = (group: StoredGroup, membership: Membership?)?
        return try cached(
            appID: appID,
            find: { (version) -> Found? in
                guard let group = cache.group(appID: appID, guid: guid, version: version) else { return nil }
                guard let group else { return .some(nil) }
                guard
                    let membership = cache.membership(appID: appID, groupID: group.id, uid: uid, version: version)
                else { return nil }
                return .some((group, membership))
            },
            load: { (session) throws(ModerationError) -> Found in
                try session.groupAndMembership(appID: appID, guid: guid, uid: uid)
            },
            keep: { (found, version) in
                cache.keep(group: found?.group, guid: guid, appID: appID, version: version, generation: generation)
                if let found {
                    cache.keep(
                        membership: found.membership, groupID: found.group.id, uid: uid, appID: appID,
                        version: version, generation: generation)
                }
            })
    }

    func membership(groupID: Int64, uid: String) throws(ModerationError) -> Membership? {
        guard let appID = cache.appOf(groupID: groupID) else {
            return try transaction().membership(groupID: groupID, uid: uid)
        }
        return try cached(
            appID: appID, find: { cache.membership(appID: appID, groupID: groupID, uid: uid, version: $0) },
            load: { (session) throws(ModerationError) in try session.membership(groupID: groupID, uid: uid) },
            keep: {
                cache.keep(
                    membership: $0, groupID: groupID, uid: uid, appID: appID, version: $1, generation: generation)
            })
    }

    func members(groupID: Int64, query: MemberPageQuery) throws(ModerationError) -> [Member] {
        guard query.isWholeFirstPage, let appID = cache.appOf(groupID: groupID) else {
            return try transaction().members(groupID: groupID, query: query)
        }
        let limit = query.limit
        return try cached(
            appID: appID, find: { cache.memberPage(appID: appID, groupID: groupID, limit: limit, version: $0) },
            load: { (session) throws(ModerationError) in try session.members(groupID: groupID, query: query) },
            keep: {
                cache.keep(
                    memberPage: $0, groupID: groupID, limit: limit, appID: appID, version: $1, generation: generation)
            })
    }

    /// From memory at the version the read keeps to (`AppBanSets`), every call on behalf of a
    /// user asks it; an app that never banned anyone needs no set at all. A set not kept yet is
    /// read in the transaction, at the transaction's version, and kept.
    func appBanStanding(appID: Int64, uid: String) throws(ModerationError) -> AppBanStanding? {
        guard try cachedVersion(of: appID) != nil, let readVersion = appBansVersion else {
            return try transaction().appBanStanding(appID: appID, uid: uid)
        }
        if let kept = appBanSets.bans(appID: appID, version: readVersion) {
            answeredFromCache = true
            return kept[uid]
        }
        let session = try transaction()
        let bans = try session.appBansOfApp(appID: appID)
        // The transaction's version: the same as before, unless nothing came from the cache.
        if let version = appBansVersion {
            appBanSets.keep(bans, appID: appID, version: version, generation: appBansGeneration)
        }
        return bans[uid]
    }

    // MARK: Read in the transaction

    func appBan(appID: Int64, uid: String) throws(ModerationError) -> AppBan? {
        try transaction().appBan(appID: appID, uid: uid)
    }

    func appBans(appID: Int64, query: BanPageQuery) throws(ModerationError) -> [AppBan] {
        try transaction().appBans(appID: appID, query: query)
    }

    func user(appID: Int64, uid: String) throws(ModerationError) -> StoredUser? {
        try transaction().user(appID: appID, uid: uid)
    }

    func uidRetired(appID: Int64, uid: String) throws(ModerationError) -> Bool {
        try transaction().uidRetired(appID: appID, uid: uid)
    }

    func ban(groupID: Int64, uid: String) throws(ModerationError) -> Ban? {
        try transaction().ban(groupID: groupID, uid: uid)
    }

    func invite(groupID: Int64, uid: String) throws(ModerationError) -> Invite? {
        try transaction().invite(groupID: groupID, uid: uid)
    }

    func invites(groupID: Int64, query: InvitePageQuery) throws(ModerationError) -> [Invite] {
        try transaction().invites(groupID: groupID, query: query)
    }

    func invitesOf(appID: Int64, uid: String, query: InvitePageQuery) throws(ModerationError) -> [InviteListing] {
        try transaction().invitesOf(appID: appID, uid: uid, query: query)
    }

    func joinRequest(groupID: Int64, uid: String) throws(ModerationError) -> JoinRequest? {
        try transaction().joinRequest(groupID: groupID, uid: uid)
    }

    func joinRequests(groupID: Int64, query: JoinRequestPageQuery) throws(ModerationError) -> [JoinRequest] {
        try transaction().joinRequests(groupID: groupID, query: query)
    }

    func pendingJoinRequestCount(groupID: Int64) throws(ModerationError) -> Int {
        try transaction().pendingJoinRequestCount(groupID: groupID)
    }

    func contentRules(appID: Int64, guid: String, afterID: UInt64, limit: Int) throws(ModerationError)
        -> [ContentRule]
    {
        try transaction().contentRules(appID: appID, guid: guid, afterID: afterID, limit: limit)
    }

    func contentRuleCount(appID: Int64, guid: String) throws(ModerationError) -> Int {
        try transaction().contentRuleCount(appID: appID, guid: guid)
    }

    func contentRule(appID: Int64, guid: String, id: UInt64) throws(ModerationError) -> ContentRule? {
        try transaction().contentRule(appID: appID, guid: guid, id: id)
    }

    func contentRule(appID: Int64, guid: String, kind: ContentRuleKind, pattern: String) throws(ModerationError)
        -> ContentRule?
    {
        try transaction().contentRule(appID: appID, guid: guid, kind: kind, pattern: pattern)
    }

    func contentRuleSetVersions() throws(ModerationError) -> [ContentRuleSetVersion] {
        try transaction().contentRuleSetVersions()
    }

    /// Never cached: delivery's progress changes without the app's data version (leases and
    /// cursors are written without the app's lock).
    func webhooks(appID: Int64) throws(ModerationError) -> [StoredWebhook] {
        try transaction().webhooks(appID: appID)
    }

    func enabledWebhooks() throws(ModerationError) -> [StoredWebhook] {
        try transaction().enabledWebhooks()
    }

    func report(groupID: Int64, id: UInt64) throws(ModerationError) -> Report? {
        try transaction().report(groupID: groupID, id: id)
    }

    func openReport(groupID: Int64, reporter: String, target: String) throws(ModerationError) -> Report? {
        try transaction().openReport(groupID: groupID, reporter: reporter, target: target)
    }

    func reports(groupID: Int64, query: ReportPageQuery) throws(ModerationError) -> [Report] {
        try transaction().reports(groupID: groupID, query: query)
    }

    func reportCounts(groupID: Int64, open: Bool) throws(ModerationError) -> [String: Int] {
        try transaction().reportCounts(groupID: groupID, open: open)
    }

    func reportsFiled(appID: Int64, reporter: String, since: Int64) throws(ModerationError) -> Int {
        try transaction().reportsFiled(appID: appID, reporter: reporter, since: since)
    }

    func bans(groupID: Int64, query: BanPageQuery) throws(ModerationError) -> [Ban] {
        try transaction().bans(groupID: groupID, query: query)
    }

    func groups(appID: Int64, query: GroupPageQuery) throws(ModerationError) -> [GroupListing] {
        try transaction().groups(appID: appID, query: query)
    }

    func actions(appID: Int64, query: ActionLogQuery) throws(ModerationError) -> [ActionRecord] {
        try transaction().actions(appID: appID, query: query)
    }

    func hasActions(groupID: Int64, on uid: String) throws(ModerationError) -> Bool {
        try transaction().hasActions(groupID: groupID, on: uid)
    }

    func logBounds(appID: Int64) throws(ModerationError) -> LogBounds {
        try transaction().logBounds(appID: appID)
    }

    func groupsOf(appID: Int64, uid: String) throws(ModerationError) -> [String] {
        try transaction().groupsOf(appID: appID, uid: uid)
    }

    func groupsBanning(appID: Int64, uid: String) throws(ModerationError) -> [String] {
        try transaction().groupsBanning(appID: appID, uid: uid)
    }

    func postingStandings(appID: Int64, checks: [PostCheck]) throws(ModerationError) -> [PostingStanding?] {
        try transaction().postingStandings(appID: appID, checks: checks)
    }

    func idempotentReply(appID: Int64, actor: String, key: String, notBefore: Int64) throws(ModerationError)
        -> [UInt8]?
    {
        try transaction().idempotentReply(appID: appID, actor: actor, key: key, notBefore: notBefore)
    }
}
