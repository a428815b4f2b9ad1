internal import Moderation

extension SQLiteSession {
    /// One page of a group's members or bans, or of the app's bans: the statement of the search
    /// plan `search` needs, the parameters every such list shares, and up to `limit` rows.
    ///
    /// - Parameters:
    ///   - owner: the group's key (the app's, for the app's bans).
    ///   - appID: the app's key, when known (else read from the group, for a search).
    ///   - bind: binds the list's own parameters, ?2–?4 (the keyset and the list's filter).
    ///   - decode: reads one row.
    func userListPage<Row>(
        _ list: Query.UserList, of owner: Int64, appID: Int64? = nil, search: String, limit: Int,
        bind: (SQLiteStatement) -> Void, decode: (SQLiteStatement) -> Row
    ) throws(ModerationError) -> [Row] {
        var plan = SearchPlan.none
        if !search.isEmpty {
            let app: Int64
            if let appID { app = appID } else { app = try appOfGroup(owner) }
            plan = try searchPlan(search, kind: .user, appID: app)
        }
        return try connection.run(list.query(for: plan)) { (statement) throws(ModerationError) -> [Row] in
            statement.bind(1, owner)
            bind(statement)
            statement.bind(5, limit)
            switch plan {
            case .none:
                break
            case .scan(let keyword):
                statement.bind(6, keyword)
            case .candidates(let keyword, let ids):
                statement.bind(6, keyword)
                statement.bind(7, ids)
            }
            return try statement.rows(reservingCapacity: limit, decode)
        }
    }

    /// One page of a group's bans or of the app's, which page alike: by the keyset (banned_at
    /// descending, uid), with only the bans in force at the query's time.
    func banPage<Row>(
        _ list: Query.UserList, of owner: Int64, appID: Int64? = nil, query: BanPageQuery,
        decode: (SQLiteStatement) -> Row
    ) throws(ModerationError) -> [Row] {
        try userListPage(
            list, of: owner, appID: appID, search: query.search, limit: query.limit,
            bind: { $0.bind(from: 2, query.after?.bannedAt ?? Int64.max, query.after?.uid ?? "", query.activeAt) },
            decode: decode)
    }
}
