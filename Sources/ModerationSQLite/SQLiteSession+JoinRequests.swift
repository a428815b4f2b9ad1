internal import Moderation

/// Join requests: read straight from their table (the writer caches none).
extension SQLiteSession {
    func joinRequest(groupID: Int64, uid: String) throws(ModerationError) -> JoinRequest? {
        try connection.run(.joinRequest) { (statement) throws(ModerationError) -> JoinRequest? in
            statement.bind(1, groupID)
            statement.bind(2, uid)
            return try statement.step() ? decodeJoinRequest(statement) : nil
        }
    }

    func joinRequests(groupID: Int64, query: JoinRequestPageQuery) throws(ModerationError) -> [JoinRequest] {
        try connection.run(.joinRequestsPage) { (statement) throws(ModerationError) -> [JoinRequest] in
            statement.bind(1, groupID)
            statement.bind(2, query.after?.joinedAt ?? Int64.min)
            statement.bind(3, query.after?.uid ?? "")
            statement.bind(4, query.limit)
            var rows: [JoinRequest] = []
            while try statement.step() { rows.append(decodeJoinRequest(statement)) }
            return rows
        }
    }

    func pendingJoinRequestCount(groupID: Int64) throws(ModerationError) -> Int {
        try connection.run(.joinRequestCount) { (statement) throws(ModerationError) -> Int in
            statement.bind(1, groupID)
            return try statement.step() ? statement.int(0) : 0
        }
    }

    func insertJoinRequest(groupID: Int64, user: StoredUser, request: JoinRequest) throws(ModerationError) {
        try connection.run(.insertJoinRequest) { (statement) throws(ModerationError) in
            statement.bind(1, groupID)
            statement.bind(2, user.user.uid)
            statement.bind(3, user.id)
            statement.bind(4, request.message)
            statement.bind(5, request.requestedAt)
            try statement.execute()
        }
    }

    func deleteJoinRequest(groupID: Int64, uid: String) throws(ModerationError) {
        try connection.run(.deleteJoinRequest) { (statement) throws(ModerationError) in
            statement.bind(1, groupID)
            statement.bind(2, uid)
            try statement.execute()
        }
    }

    /// Drops every join request of a user being deleted.
    func deleteJoinRequests(ofUser userID: Int64) throws(ModerationError) {
        try connection.run(.deleteJoinRequestsOfUser) { (statement) throws(ModerationError) in
            statement.bind(1, userID)
            try statement.execute()
        }
    }

    /// A join request row: uid, name, avatar, message, requested_at.
    private func decodeJoinRequest(_ statement: SQLiteStatement) -> JoinRequest {
        JoinRequest(
            uid: statement.string(0), name: statement.string(1), avatar: statement.string(2),
            message: statement.string(3), requestedAt: statement.int64(4))
    }
}
