internal import Moderation
internal import ModerationStoreSupport

/// Invites: read straight from their table (the writer caches none: no hot path reads them).
extension SQLiteSession {
    func invite(groupID: Int64, uid: String) throws(ModerationError) -> Invite? {
        try connection.row(.invite, groupID, uid) { decodeInvite($0, from: 0) }
    }

    func invites(groupID: Int64, query: InvitePageQuery) throws(ModerationError) -> [Invite] {
        try connection.rows(
            .invitesPage, groupID, query.after?.invitedAt ?? Int64.max, query.after?.id ?? "", query.liveAt, query.limit
        ) { decodeInvite($0, from: 0) }
    }

    func invitesOf(appID: Int64, uid: String, query: InvitePageQuery) throws(ModerationError) -> [InviteListing] {
        try connection.rows(
            .invitesOfUser, appID, uid, query.after?.invitedAt ?? Int64.max, query.after?.id ?? "", query.liveAt,
            query.limit
        ) { (statement) throws(ModerationError) in
            InviteListing(
                group: try decodeGroup(statement), invite: decodeInvite(statement, from: Self.groupColumnCount))
        }
    }

    func upsertInvite(groupID: Int64, user: StoredUser, invite: Invite) throws(ModerationError) {
        try connection.execute(
            .upsertInvite, groupID, user.user.uid, user.id, StorageCodes.code(invite.scope), invite.invitedBy,
            invite.invitedAt, invite.expiresAt)
    }

    func deleteInvite(groupID: Int64, uid: String) throws(ModerationError) {
        try connection.execute(.deleteInvite, groupID, uid)
    }

    func purgeExpiredInvites(at now: Int64, limit: Int) throws(ModerationError) -> Int {
        try connection.execute(.purgeInvites, now, limit)
        return connection.changes
    }

    /// Drops every invite of a user being deleted.
    func deleteInvites(ofUser userID: Int64) throws(ModerationError) {
        try connection.execute(.deleteInvitesOfUser, userID)
    }

    /// How many columns `Query.groupColumns` has (an invite's follow them in `invitesOfUser`).
    static let groupColumnCount: Int32 = 18

    /// An invite row in the order of `Query.inviteColumns`, starting at column `first`.
    private func decodeInvite(_ statement: SQLiteStatement, from first: Int32) -> Invite {
        Invite(
            uid: statement.string(first), name: statement.string(first + 1), avatar: statement.string(first + 2),
            scope: StorageCodes.scope(statement.int(first + 3)) ?? .participant, invitedBy: statement.string(first + 4),
            invitedAt: statement.int64(first + 5), expiresAt: statement.int64(first + 6))
    }
}
