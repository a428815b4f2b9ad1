internal import Moderation

/// Join requests: read straight from their table (the writer caches none).
extension SQLiteSession {
    func joinRequest(groupID: Int64, uid: String) throws(ModerationError) -> JoinRequest? {
        try connection.row(.joinRequest, groupID, uid, decode: decodeJoinRequest)
    }

    func joinRequests(groupID: Int64, query: JoinRequestPageQuery) throws(ModerationError) -> [JoinRequest] {
        try connection.rows(
            .joinRequestsPage, groupID, query.after?.joinedAt ?? Int64.min, query.after?.uid ?? "", query.limit,
            decode: decodeJoinRequest)
    }

    func pendingJoinRequestCount(groupID: Int64) throws(ModerationError) -> Int {
        try connection.row(.joinRequestCount, groupID) { $0.int(0) } ?? 0
    }

    func insertJoinRequest(groupID: Int64, user: StoredUser, request: JoinRequest) throws(ModerationError) {
        try connection.execute(
            .insertJoinRequest, groupID, user.user.uid, user.id, request.message, request.requestedAt)
    }

    func deleteJoinRequest(groupID: Int64, uid: String) throws(ModerationError) {
        try connection.execute(.deleteJoinRequest, groupID, uid)
    }

    /// Drops every join request of a user being deleted.
    func deleteJoinRequests(ofUser userID: Int64) throws(ModerationError) {
        try connection.execute(.deleteJoinRequestsOfUser, userID)
    }

    /// A join request row: uid, name, avatar, message, requested_at.
    private func decodeJoinRequest(_ statement: SQLiteStatement) -> JoinRequest {
        JoinRequest(
            uid: statement.string(0), name: statement.string(1), avatar: statement.string(2),
            message: statement.string(3), requestedAt: statement.int64(4))
    }
}
