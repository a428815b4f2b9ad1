internal import Moderation

extension SQLiteSession {
    /// One page of a group's members or bans: the statement of the search plan `search` needs,
    /// the parameters every such list shares, and up to `limit` rows.
    ///
    /// - Parameters:
    ///   - bind: binds the list's own parameters, ?2–?4 (the keyset and the list's filter).
    ///   - decode: reads one row.
    func userListPage<Row>(
        _ list: Query.UserList, groupID: Int64, search: String, limit: Int, bind: (SQLiteStatement) -> Void,
        decode: (SQLiteStatement) -> Row
    ) throws(ModerationError) -> [Row] {
        let plan = search.isEmpty ? .none : try searchPlan(search, kind: .user, appID: appOfGroup(groupID))
        return try connection.run(list.query(for: plan)) { (statement) throws(ModerationError) -> [Row] in
            statement.bind(1, groupID)
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
            var rows: [Row] = []
            rows.reserveCapacity(limit)
            while try statement.step() { rows.append(decode(statement)) }
            return rows
        }
    }
}
