internal import Moderation
internal import ModerationStoreSupport

extension SQLiteSession {
    func membership(groupID: Int64, uid: String) throws(ModerationError) -> Membership? {
        let key = WriterCache.EntryKey(groupID: groupID, uid: uid)
        if isWriter, let known = cache.membership(key) { return known }
        let found = try connection.run(.membership) { (statement) throws(ModerationError) -> Membership? in
            statement.bind(1, groupID)
            statement.bind(2, uid)
            guard try statement.step(), let scope = StorageCodes.scope(statement.int(0)) else { return nil }
            return Membership(scope: scope, joinedAt: statement.int64(1))
        }
        if isWriter { cache.set(key, membership: found) }
        return found
    }

    func insertMember(groupID: Int64, user: StoredUser, membership: Membership) throws(ModerationError) {
        try connection.run(.insertMember) { (statement) throws(ModerationError) in
            statement.bind(1, groupID)
            statement.bind(2, user.user.uid)
            statement.bind(3, user.id)
            statement.bind(4, StorageCodes.code(membership.scope))
            statement.bind(5, membership.joinedAt)
            try statement.execute()
        }
        cache.set(WriterCache.EntryKey(groupID: groupID, uid: user.user.uid), membership: membership)
    }

    func deleteMember(groupID: Int64, uid: String) throws(ModerationError) {
        try connection.run(.deleteMember) { (statement) throws(ModerationError) in
            statement.bind(1, groupID)
            statement.bind(2, uid)
            try statement.execute()
        }
        cache.set(WriterCache.EntryKey(groupID: groupID, uid: uid), membership: nil)
    }

    func setMemberScope(groupID: Int64, uid: String, scope: Scope) throws(ModerationError) {
        try connection.run(.setScope) { (statement) throws(ModerationError) in
            statement.bind(1, groupID)
            statement.bind(2, uid)
            statement.bind(3, StorageCodes.code(scope))
            try statement.execute()
        }
        let key = WriterCache.EntryKey(groupID: groupID, uid: uid)
        if let known = cache.membership(key), var membership = known {
            membership.scope = scope
            cache.set(key, membership: membership)
        }
    }

    func members(groupID: Int64, query: MemberPageQuery) throws(ModerationError) -> [Member] {
        try userListPage(
            .members, groupID: groupID, search: query.search, limit: query.limit,
            bind: { statement in
                statement.bind(2, query.after?.joinedAt ?? Int64.min)
                statement.bind(3, query.after?.uid ?? "")
                statement.bind(4, StorageCodes.mask(query.scopes))
            }, decode: decodeMember)
    }

    func groupsOf(appID: Int64, uid: String) throws(ModerationError) -> [String] {
        try connection.run(.groupsOfUser) { (statement) throws(ModerationError) -> [String] in
            statement.bind(1, appID)
            statement.bind(2, uid)
            var guids: [String] = []
            while try statement.step() { guids.append(statement.string(0)) }
            return guids
        }
    }

    /// A member row in the order of `Query.memberColumns`.
    private func decodeMember(_ statement: SQLiteStatement) -> Member {
        Member(
            uid: statement.string(0), name: statement.string(1), avatar: statement.string(2),
            scope: StorageCodes.scope(statement.int(3)) ?? .participant, joinedAt: statement.int64(4))
    }
}
