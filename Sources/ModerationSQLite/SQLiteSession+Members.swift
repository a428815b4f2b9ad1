internal import Moderation
internal import ModerationStoreSupport

extension SQLiteSession {
    func membership(groupID: Int64, uid: String) throws(ModerationError) -> Membership? {
        let key = GroupUserKey(groupID: groupID, uid: uid)
        if isWriter, let known = cache.membership(key) { return known }
        let found =
            try connection.row(.membership, groupID, uid) { statement -> Membership? in
                guard let scope = StorageCodes.scope(statement.int(0)) else { return nil }
                return Membership(
                    scope: scope, joinedAt: statement.int64(1),
                    mute: StorageCodes.mute(mutedUntil: statement.int64(2), reason: statement.string(3)))
            } ?? nil
        if isWriter { cache.set(key, membership: found) }
        return found
    }

    /// Inserts a membership without a mute (a new member is never muted), dropping any invite of
    /// the user to the group and any join request of theirs (a member has neither).
    func insertMember(groupID: Int64, user: StoredUser, membership: Membership) throws(ModerationError) {
        try connection.execute(
            .insertMember, groupID, user.user.uid, user.id, StorageCodes.code(membership.scope), membership.joinedAt)
        try deleteInvite(groupID: groupID, uid: user.user.uid)
        try deleteJoinRequest(groupID: groupID, uid: user.user.uid)
        cache.setInserted(membership, groupID: groupID, uid: user.user.uid)
    }

    func deleteMember(groupID: Int64, uid: String) throws(ModerationError) {
        try connection.execute(.deleteMember, groupID, uid)
        cache.set(GroupUserKey(groupID: groupID, uid: uid), membership: nil)
    }

    func setMemberScope(groupID: Int64, uid: String, scope: Scope) throws(ModerationError) {
        try connection.execute(.setScope, groupID, uid, StorageCodes.code(scope))
        cache.updateMembership(GroupUserKey(groupID: groupID, uid: uid)) { $0.scope = scope }
    }

    func setMemberMute(groupID: Int64, uid: String, mute: Mute?) throws(ModerationError) {
        try connection.execute(.setMute, groupID, uid, StorageCodes.mutedUntil(mute), mute?.reason ?? "")
        cache.updateMembership(GroupUserKey(groupID: groupID, uid: uid)) { $0.mute = mute }
    }

    func members(groupID: Int64, query: MemberPageQuery) throws(ModerationError) -> [Member] {
        try userListPage(
            .members, of: groupID, search: query.search, limit: query.limit,
            bind: { statement in
                statement.bind(
                    from: 2, query.after?.joinedAt ?? Int64.min, query.after?.uid ?? "", StorageCodes.mask(query.scopes)
                )
                statement.bind(8, query.mutedAt ?? 0)
            }, decode: decodeMember)
    }

    func expiredMutes(at now: Int64, limit: Int) throws(ModerationError) -> [ExpiredEntry] {
        try connection.rows(.expiredMutes, now, limit, decode: decodeExpiredEntry)
    }

    /// Each group read once per snapshot (a unique-key lookup, then kept in memory while the
    /// reader's read transaction lasts: `postingGroups`); then each pair from the store's
    /// `PostingCache` when it holds the pair at the group's version, else with one primary-key
    /// lookup of the membership (and, for a non-member, one of the ban), kept for the next asker.
    func postingStandings(appID: Int64, checks: [PostCheck]) throws(ModerationError) -> [PostingStanding?] {
        var standings: [PostingStanding?] = []
        standings.reserveCapacity(checks.count)
        // The writer never asks (CheckPost is a read); its reads must see its own writes.
        let cached = !isWriter
        if postingGroups.count > Self.postingGroupsLimit { postingGroups.removeAll(keepingCapacity: true) }
        for check in checks {
            let key = PostingGroupKey(appID: appID, guid: check.guid)
            let found: PostingGroup?
            if cached, let known = postingGroups[key] {
                found = known
            } else {
                found = try postingGroup(appID: appID, guid: check.guid)
                if cached { postingGroups[key] = .some(found) }
            }
            guard let group = found else {
                standings.append(nil)
                continue
            }
            let pair = PostingCache.Key(groupID: group.id, uid: check.uid)
            let entry: PostingCache.Entry
            if cached, let known = postingCache?.entry(pair, version: group.version) {
                entry = known
            } else {
                let membership = try membership(groupID: group.id, uid: check.uid)
                entry = PostingCache.Entry(
                    version: group.version, membership: membership.map(PostingMembership.init),
                    banExpiresAt: membership == nil ? try banExpiry(groupID: group.id, uid: check.uid) : nil)
                if cached { postingCache?.store(entry, for: pair) }
            }
            // The ban from the app comes from memory: it is not a group's, so no group version
            // covers it in the posting cache.
            standings.append(
                PostingStanding(
                    groupType: group.type, frozen: group.frozen, membership: entry.membership,
                    banExpiresAt: entry.banExpiresAt, appBan: try appBanStanding(appID: appID, uid: check.uid)))
        }
        return standings
    }

    private func postingGroup(appID: Int64, guid: String) throws(ModerationError) -> PostingGroup? {
        try connection.row(.postingGroup, appID, guid) { statement in
            PostingGroup(
                id: statement.int64(0), type: StorageCodes.groupType(statement.int(1)), frozen: statement.int(2) != 0,
                version: statement.uint64(3))
        }
    }

    /// The expiry of `uid`'s ban row in the group (0: permanent), or nil when there is none.
    private func banExpiry(groupID: Int64, uid: String) throws(ModerationError) -> Int64? {
        try connection.row(.banExpiry, groupID, uid) { $0.int64(0) }
    }

    /// Groups a reader keeps for CheckPost at most; past it the next call starts afresh.
    static let postingGroupsLimit = 10_000

    func groupsOf(appID: Int64, uid: String) throws(ModerationError) -> [String] {
        try guids(.groupsOfUser, appID: appID, uid: uid)
    }

    func groupsBanning(appID: Int64, uid: String) throws(ModerationError) -> [String] {
        try guids(.groupsBanningUser, appID: appID, uid: uid)
    }

    /// The guids a statement taking (?1 app, ?2 uid) returns.
    private func guids(_ query: Query, appID: Int64, uid: String) throws(ModerationError) -> [String] {
        try connection.rows(query, appID, uid) { $0.string(0) }
    }

    /// An expired ban or mute: app id, app, guid, uid.
    func decodeExpiredEntry(_ statement: SQLiteStatement) -> ExpiredEntry {
        ExpiredEntry(
            appID: statement.int64(0), app: statement.string(1), guid: statement.string(2), uid: statement.string(3))
    }

    /// A member row in the order of `Query.memberColumns`.
    private func decodeMember(_ statement: SQLiteStatement) -> Member {
        Member(
            uid: statement.string(0), name: statement.string(1), avatar: statement.string(2),
            scope: StorageCodes.scope(statement.int(3)) ?? .participant, joinedAt: statement.int64(4),
            mute: StorageCodes.mute(mutedUntil: statement.int64(5), reason: statement.string(6)))
    }
}
