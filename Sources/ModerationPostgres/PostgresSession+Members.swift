internal import Moderation
internal import ModerationStoreSupport

extension PostgresSession {
    func membership(groupID: Int64, uid: String) throws(ModerationError) -> Membership? {
        let key = WriterCache.EntryKey(groupID: groupID, uid: uid)
        if isWriter, let known = cache.membership(key) { return known }
        let row = try connection.query(.membership, [.int(groupID), .text(uid)])
        var found: Membership? = nil
        if row.rowCount > 0, let scope = StorageCodes.scope(row.int(0, 0)) {
            found = Membership(scope: scope, joinedAt: row.int64(0, 1))
        }
        if isWriter { cache.set(key, membership: found) }
        return found
    }

    func insertMember(groupID: Int64, user: StoredUser, membership: Membership) throws(ModerationError) {
        try connection.send(
            .insertMember,
            [
                .int(groupID), .text(user.user.uid), .int(user.id), .int(StorageCodes.code(membership.scope)),
                .int(membership.joinedAt),
            ])
        cache.set(WriterCache.EntryKey(groupID: groupID, uid: user.user.uid), membership: membership)
    }

    func deleteMember(groupID: Int64, uid: String) throws(ModerationError) {
        try connection.send(.deleteMember, [.int(groupID), .text(uid)])
        cache.set(WriterCache.EntryKey(groupID: groupID, uid: uid), membership: nil)
    }

    func setMemberScope(groupID: Int64, uid: String, scope: Scope) throws(ModerationError) {
        try connection.send(.setScope, [.int(groupID), .text(uid), .int(StorageCodes.code(scope))])
        let key = WriterCache.EntryKey(groupID: groupID, uid: uid)
        if let known = cache.membership(key), var membership = known {
            membership.scope = scope
            cache.set(key, membership: membership)
        }
    }

    func members(groupID: Int64, query: MemberPageQuery) throws(ModerationError) -> [Member] {
        var parameters: [PGValue] = [
            .int(groupID), .int(query.after?.joinedAt ?? Int64.min), .text(query.after?.uid ?? ""),
            .int(StorageCodes.mask(query.scopes)), .int(query.limit),
        ]
        let rows: PGResult
        if query.search.isEmpty {
            rows = try connection.query(.membersPage, parameters)
        } else {
            parameters.append(SearchSQL.pattern(query.search))
            rows = try connection.query(sql: SearchSQL.members, parameters)
        }
        return (0..<rows.rowCount).map { row in
            Member(
                uid: rows.string(row, 0), name: rows.string(row, 1), avatar: rows.string(row, 2),
                scope: StorageCodes.scope(rows.int(row, 3)) ?? .participant, joinedAt: rows.int64(row, 4))
        }
    }

    func groupsOf(appID: Int64, uid: String) throws(ModerationError) -> [String] {
        let rows = try connection.query(.groupsOfUser, [.int(appID), .text(uid)])
        return (0..<rows.rowCount).map { rows.string($0, 0) }
    }
}
