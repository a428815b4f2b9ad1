internal import Moderation
internal import ModerationStoreSupport

extension PostgresSession {
    func membership(groupID: Int64, uid: String) throws(ModerationError) -> Membership? {
        let key = GroupUserKey(groupID: groupID, uid: uid)
        if isWriter, let known = cache.membership(key) { return known }
        if isWriter, let appID = cache.appOfGroup[groupID] {
            try standing(appID: appID, groupID: groupID, uid: uid)
            if let known = cache.membership(key) { return known }
        }
        let row = try connection.query(.membership, [.int(groupID), .text(uid)])
        let found = row.rowCount > 0 ? decodeMembership(row, 0) : nil
        if isWriter { cache.set(key, membership: found) }
        return found
    }

    /// A membership from (scope, joined_at, muted_until, mute_reason) at column `first` on; nil
    /// when the scope is NULL (no row, in an outer join) or unknown.
    func decodeMembership(_ rows: PGResult, _ row: Int, from first: Int = 0) -> Membership? {
        guard !rows.isNull(row, first), let scope = StorageCodes.scope(rows.int(row, first)) else { return nil }
        return Membership(
            scope: scope, joinedAt: rows.int64(row, first + 1),
            mute: StorageCodes.mute(mutedUntil: rows.int64(row, first + 2), reason: rows.string(row, first + 3)))
    }

    /// Inserts a membership without a mute (a new member is never muted), dropping any invite of
    /// the user to the group and any join request of theirs in the same statement (a member has
    /// neither).
    func insertMember(groupID: Int64, user: StoredUser, membership: Membership) throws(ModerationError) {
        try connection.send(
            .insertMember,
            [
                .int(groupID), .text(user.user.uid), .int(user.id), .int(StorageCodes.code(membership.scope)),
                .int(membership.joinedAt),
            ])
        cache.setInserted(membership, groupID: groupID, uid: user.user.uid)
    }

    func deleteMember(groupID: Int64, uid: String) throws(ModerationError) {
        try connection.send(.deleteMember, [.int(groupID), .text(uid)])
        cache.set(GroupUserKey(groupID: groupID, uid: uid), membership: nil)
    }

    func setMemberScope(groupID: Int64, uid: String, scope: Scope) throws(ModerationError) {
        try connection.send(.setScope, [.int(groupID), .text(uid), .int(StorageCodes.code(scope))])
        cache.updateMembership(GroupUserKey(groupID: groupID, uid: uid)) { $0.scope = scope }
    }

    func setMemberMute(groupID: Int64, uid: String, mute: Mute?) throws(ModerationError) {
        try connection.send(
            .setMute, [.int(groupID), .text(uid), .int(StorageCodes.mutedUntil(mute)), .text(mute?.reason ?? "")])
        cache.updateMembership(GroupUserKey(groupID: groupID, uid: uid)) { $0.mute = mute }
    }

    func members(groupID: Int64, query: MemberPageQuery) throws(ModerationError) -> [Member] {
        let rows = try SearchSQL.page(
            .membersPage, orSearch: SearchSQL.members, for: query.search,
            [
                .int(groupID), .int(query.after?.joinedAt ?? Int64.min), .text(query.after?.uid ?? ""),
                .int(StorageCodes.mask(query.scopes)), .int(query.limit), .int(query.mutedAt ?? 0),
            ], on: connection)
        return (0..<rows.rowCount).map { row in
            Member(
                uid: rows.string(row, 0), name: rows.string(row, 1), avatar: rows.string(row, 2),
                scope: StorageCodes.scope(rows.int(row, 3)) ?? .participant, joinedAt: rows.int64(row, 4),
                mute: StorageCodes.mute(mutedUntil: rows.int64(row, 5), reason: rows.string(row, 6)))
        }
    }

    func groupsOf(appID: Int64, uid: String) throws(ModerationError) -> [String] {
        let rows = try connection.query(.groupsOfUser, [.int(appID), .text(uid)])
        return (0..<rows.rowCount).map { rows.string($0, 0) }
    }

    func groupsBanning(appID: Int64, uid: String) throws(ModerationError) -> [String] {
        let rows = try connection.query(.groupsBanningUser, [.int(appID), .text(uid)])
        return (0..<rows.rowCount).map { rows.string($0, 0) }
    }

    /// Expired mutes whose app this transaction holds or could lock now (see `expiredBans`: the
    /// sweeper rechecks each under the lock, so each expiry is recorded once).
    func expiredMutes(at now: Int64, limit: Int) throws(ModerationError) -> [ExpiredEntry] {
        try lockedExpiries(.expiredMutes, at: now, limit: limit)
    }

    /// Every check of a call in one statement: one round trip, however many pairs.
    func postingStandings(appID: Int64, checks: [PostCheck]) throws(ModerationError) -> [PostingStanding?] {
        let rows = try connection.query(
            .postingStandings, [.int(appID), .textArray(checks.map(\.guid)), .textArray(checks.map(\.uid))])
        var standings: [PostingStanding?] = []
        standings.reserveCapacity(rows.rowCount)
        for row in 0..<rows.rowCount {
            guard !rows.isNull(row, 1) else {
                standings.append(nil)
                continue
            }
            var membership: PostingMembership? = nil
            if let scope = rows.optionalInt(row, 3).flatMap(StorageCodes.scope) {
                membership = PostingMembership(
                    scope: scope,
                    muteExpiresAt: StorageCodes.mute(mutedUntil: rows.int64(row, 4), reason: "")?.expiresAt)
            }
            let appBan =
                rows.isNull(row, 6) ? nil : AppBanStanding(expiresAt: rows.int64(row, 6), shadow: rows.bool(row, 7))
            standings.append(
                PostingStanding(
                    groupType: StorageCodes.groupType(rows.int(row, 1)), frozen: rows.bool(row, 2),
                    membership: membership, banExpiresAt: rows.isNull(row, 5) ? nil : rows.int64(row, 5),
                    appBan: appBan))
        }
        return standings
    }
}
