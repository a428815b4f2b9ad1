internal import Moderation

/// Join requests: read straight from their table (the writer caches none).
extension PostgresSession {
    func joinRequest(groupID: Int64, uid: String) throws(ModerationError) -> JoinRequest? {
        let rows = try connection.query(.joinRequest, [.int(groupID), .text(uid)])
        return rows.rowCount > 0 ? decodeJoinRequest(rows, 0) : nil
    }

    func joinRequests(groupID: Int64, query: JoinRequestPageQuery) throws(ModerationError) -> [JoinRequest] {
        let rows = try connection.query(
            .joinRequestsPage,
            [
                .int(groupID), .int(query.after?.joinedAt ?? Int64.min), .text(query.after?.uid ?? ""),
                .int(query.limit),
            ])
        return (0..<rows.rowCount).map { decodeJoinRequest(rows, $0) }
    }

    func pendingJoinRequestCount(groupID: Int64) throws(ModerationError) -> Int {
        try connection.query(.joinRequestCount, [.int(groupID)]).int(0, 0)
    }

    func insertJoinRequest(groupID: Int64, user: StoredUser, request: JoinRequest) throws(ModerationError) {
        try connection.send(
            .insertJoinRequest,
            [.int(groupID), .text(user.user.uid), .int(user.id), .text(request.message), .int(request.requestedAt)])
    }

    func deleteJoinRequest(groupID: Int64, uid: String) throws(ModerationError) {
        try connection.send(.deleteJoinRequest, [.int(groupID), .text(uid)])
    }

    /// Drops every join request of a user being deleted.
    func deleteJoinRequests(ofUser userID: Int64) throws(ModerationError) {
        try connection.send(.deleteJoinRequestsOfUser, [.int(userID)])
    }

    /// A join request row: uid, name, avatar, message, requested_at.
    private func decodeJoinRequest(_ rows: PGResult, _ row: Int) -> JoinRequest {
        JoinRequest(
            uid: rows.string(row, 0), name: rows.string(row, 1), avatar: rows.string(row, 2),
            message: rows.string(row, 3), requestedAt: rows.int64(row, 4))
    }
}
