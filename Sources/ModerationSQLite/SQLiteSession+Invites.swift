internal import CSQLite
internal import Moderation
internal import ModerationStoreSupport

/// Invites: read straight from their table (the writer caches none: no hot path reads them).
extension SQLiteSession {
    func invite(groupID: Int64, uid: String) throws(ModerationError) -> Invite? {
        try connection.run(.invite) { (statement) throws(ModerationError) -> Invite? in
            statement.bind(1, groupID)
            statement.bind(2, uid)
            return try statement.step() ? decodeInvite(statement, from: 0) : nil
        }
    }

    func invites(groupID: Int64, query: InvitePageQuery) throws(ModerationError) -> [Invite] {
        try connection.run(.invitesPage) { (statement) throws(ModerationError) -> [Invite] in
            statement.bind(1, groupID)
            statement.bind(2, query.after?.invitedAt ?? Int64.max)
            statement.bind(3, query.after?.id ?? "")
            statement.bind(4, query.liveAt)
            statement.bind(5, query.limit)
            var rows: [Invite] = []
            while try statement.step() { rows.append(decodeInvite(statement, from: 0)) }
            return rows
        }
    }

    func invitesOf(appID: Int64, uid: String, query: InvitePageQuery) throws(ModerationError) -> [InviteListing] {
        try connection.run(.invitesOfUser) { (statement) throws(ModerationError) -> [InviteListing] in
            statement.bind(1, appID)
            statement.bind(2, uid)
            statement.bind(3, query.after?.invitedAt ?? Int64.max)
            statement.bind(4, query.after?.id ?? "")
            statement.bind(5, query.liveAt)
            statement.bind(6, query.limit)
            var rows: [InviteListing] = []
            while try statement.step() {
                rows.append(
                    InviteListing(
                        group: try decodeGroup(statement), invite: decodeInvite(statement, from: Self.groupColumnCount))
                )
            }
            return rows
        }
    }

    func upsertInvite(groupID: Int64, user: StoredUser, invite: Invite) throws(ModerationError) {
        try connection.run(.upsertInvite) { (statement) throws(ModerationError) in
            statement.bind(1, groupID)
            statement.bind(2, user.user.uid)
            statement.bind(3, user.id)
            statement.bind(4, StorageCodes.code(invite.scope))
            statement.bind(5, invite.invitedBy)
            statement.bind(6, invite.invitedAt)
            statement.bind(7, invite.expiresAt)
            try statement.execute()
        }
    }

    func deleteInvite(groupID: Int64, uid: String) throws(ModerationError) {
        try connection.run(.deleteInvite) { (statement) throws(ModerationError) in
            statement.bind(1, groupID)
            statement.bind(2, uid)
            try statement.execute()
        }
    }

    func purgeExpiredInvites(at now: Int64, limit: Int) throws(ModerationError) -> Int {
        try connection.run(.purgeInvites) { (statement) throws(ModerationError) -> Int in
            statement.bind(1, now)
            statement.bind(2, limit)
            try statement.execute()
            return Int(sqlite3_changes(connection.handle))
        }
    }

    /// Drops every invite of a user being deleted.
    func deleteInvites(ofUser userID: Int64) throws(ModerationError) {
        try connection.run(.deleteInvitesOfUser) { (statement) throws(ModerationError) in
            statement.bind(1, userID)
            try statement.execute()
        }
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
