internal import Moderation
internal import ModerationStoreSupport

/// Invites: read straight from their table (the writer caches none: no hot path reads them).
extension PostgresSession {
    func invite(groupID: Int64, uid: String) throws(ModerationError) -> Invite? {
        let rows = try connection.query(.invite, [.int(groupID), .text(uid)])
        return rows.rowCount > 0 ? decodeInvite(rows, 0, from: 0) : nil
    }

    func invites(groupID: Int64, query: InvitePageQuery) throws(ModerationError) -> [Invite] {
        let rows = try connection.query(
            .invitesPage,
            [
                .int(groupID), .int(query.after?.invitedAt ?? Int64.max), .text(query.after?.id ?? ""),
                .int(query.liveAt), .int(query.limit),
            ])
        return (0..<rows.rowCount).map { decodeInvite(rows, $0, from: 0) }
    }

    func invitesOf(appID: Int64, uid: String, query: InvitePageQuery) throws(ModerationError) -> [InviteListing] {
        let rows = try connection.query(
            .invitesOfUser,
            [
                .int(appID), .text(uid), .int(query.after?.invitedAt ?? Int64.max), .text(query.after?.id ?? ""),
                .int(query.liveAt), .int(query.limit),
            ])
        return (0..<rows.rowCount).map {
            InviteListing(group: decodeGroup(rows, $0), invite: decodeInvite(rows, $0, from: Self.groupColumnCount))
        }
    }

    func upsertInvite(groupID: Int64, user: StoredUser, invite: Invite) throws(ModerationError) {
        try connection.send(
            .upsertInvite,
            [
                .int(groupID), .text(user.user.uid), .int(user.id), .int(StorageCodes.code(invite.scope)),
                .text(invite.invitedBy), .int(invite.invitedAt), .int(invite.expiresAt),
            ])
    }

    func deleteInvite(groupID: Int64, uid: String) throws(ModerationError) {
        try connection.send(.deleteInvite, [.int(groupID), .text(uid)])
    }

    func purgeExpiredInvites(at now: Int64, limit: Int) throws(ModerationError) -> Int {
        Int(try connection.query(.purgeInvites, [.int(now), .int(limit)]).changedRows)
    }

    /// Drops every invite of a user being deleted.
    func deleteInvites(ofUser userID: Int64) throws(ModerationError) {
        try connection.send(.deleteInvitesOfUser, [.int(userID)])
    }

    /// How many columns `Statement.groupColumns` has (an invite's follow them in `invitesOfUser`).
    static let groupColumnCount = 18
    /// How many columns `Statement.standingColumns` has.
    static let standingColumnCount = 19

    /// An invite row in the order of `Statement.inviteColumns`, starting at column `first`.
    private func decodeInvite(_ rows: PGResult, _ row: Int, from first: Int) -> Invite {
        Invite(
            uid: rows.string(row, first), name: rows.string(row, first + 1), avatar: rows.string(row, first + 2),
            scope: StorageCodes.scope(rows.int(row, first + 3)) ?? .participant,
            invitedBy: rows.string(row, first + 4), invitedAt: rows.int64(row, first + 5),
            expiresAt: rows.int64(row, first + 6))
    }
}
