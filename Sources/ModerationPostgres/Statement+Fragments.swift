/// The pieces the statements are built from: lookups of one key, column lists in the order the
/// decoders read them, and the shared filters of the lists.
extension Statement {
    /// A lookup of `table` by `key`, for a row of pairs: a `LATERAL` subquery under `alias`, kept
    /// from being merged into the join by `OFFSET 0`, so PostgreSQL plans it alone, as one probe
    /// of the whole key per pair. PostgreSQL costs a lookup in a group it does not know when it
    /// plans by the average group: joined directly, in an app of small groups, it probed
    /// `members` by the group alone and filtered on the uid, and a batch in a group of 100 000
    /// members read half the group per pair, 0.6 s (`KeyProbeTests`). Groups and users the same
    /// way, by app: among many small apps, the plan made once for all (a generic plan) costs a
    /// lookup in an app by the average app, and joined directly it hashed the whole of a large
    /// app's groups for each batch (107 ms a read-ahead in an app of 200 000 groups beside
    /// 30 000 apps of three).
    ///
    /// `fromTable`: the row must come from the table (`Statement.readFromTable`).
    static func probe(_ table: String, as alias: String, where key: String, fromTable: Bool = false) -> String {
        let condition = fromTable ? "\(key) AND \(readFromTable(alias))" : key
        return "LATERAL (SELECT * FROM \(table) \(alias) WHERE \(condition) OFFSET 0) \(alias)"
    }

    /// A condition true of every row that only the table's row answers (`ctid IS NOT NULL`), for
    /// a lookup of one membership by its key: no index-only scan can serve it, and among index
    /// scans the primary key's one-row probe is always the cheapest. `members_by_joined` covers
    /// every column, and PostgreSQL costs a lookup in a group it does not know when it plans by
    /// the app's average group: in an app of small groups, it answered such a lookup by an
    /// index-only scan walking a large group's whole range for the uid (4–47 ms a lookup in a
    /// group of 100 000 members, 0.25 s a read-ahead of 60; `KeyProbeTests`).
    static func readFromTable(_ alias: String) -> String { "\(alias).ctid IS NOT NULL" }

    /// The id of user $2 of app $1 (only a live user's with `live`), as a scalar subquery, for
    /// the statements that read one user's groups, bans or invites through their rows. Joined
    /// instead, the user's rows were estimated as if app and uid were independent: for a uid
    /// every app has ("1", "admin") that was thousands of users, and a plan made for the values
    /// (every search, and a prepared statement's first five runs on a connection) hashed the whole
    /// of `members`: 9 ms at 26 000 memberships, growing with every app's members, against
    /// 0.3 ms through `members_by_user` (`KeyProbeTests`). A subquery's one value is looked up
    /// first, and the rows by it are estimated as one user's.
    static func userID(live: Bool = false) -> String {
        "(SELECT id FROM users WHERE app_id = $1 AND uid = $2::text\(live ? " AND deleted_at = 0" : ""))"
    }

    /// The columns `PostgresSession.decodeGroup` reads, in order, from a `groups` row named `g`.
    static let groupColumns = """
        g.id, g.revision, g.guid, g.name, g.icon, g.description, g.type, g.password_hash, g.metadata, g.tags, g.owner,
        g.members_count, g.version, g.created_at, g.updated_at, g.frozen, g.frozen_reason, g.join_requests
        """

    /// A user's standing in a group, in the order `PostgresSession.keepStanding` reads it: the user
    /// (`u`), their membership (`m`), their ban (`b`) with its user's row (`bu`).
    static let standingColumns = """
        u.id, u.uid, u.name, u.avatar, u.metadata, u.created_at, m.scope, m.joined_at, m.muted_until, m.mute_reason,
        b.uid, bu.name, bu.avatar, b.scope_before, b.joined_at, b.banned_at, b.banned_by, b.reason, b.expires_at
        """

    /// The expired rows of `rows` (a table named `alias`, joined to its app `a`), those whose
    /// `expiry` is past $1, at most $2, the earliest first, as `PostgresSession.lockedExpiries`
    /// reads them: app id, app, `guid`, uid, the app's head seq and the version of its bans from
    /// the app. Locks the apps of the rows it returns, skipping those another writer holds.
    static func lockedExpiries(of rows: String, alias: String, guid: String, expiry: String) -> String {
        """
        SELECT a.id, a.name, \(guid), \(alias).uid, a.head_seq, a.app_bans_version
        FROM \(rows)
        WHERE \(expiry) > 0 AND \(expiry) <= $1
        ORDER BY \(expiry) LIMIT $2
        FOR NO KEY UPDATE OF a SKIP LOCKED
        """
    }

    /// Data-modifying CTEs deleting the invite of user $2 to group $1 and their join request.
    static let dropInviteAndRequest = """
        dropped_invite AS (DELETE FROM invites WHERE group_id = $1 AND uid = $2),
             dropped_request AS (DELETE FROM join_requests WHERE group_id = $1 AND uid = $2)
        """

    /// The tokens in an app's rate bucket now (`leaseRateTokens`).
    static let rateAvailable =
        "least($4::float8, b.tokens + $3::float8 * greatest(0, extract(epoch FROM now() - b.updated_at)::float8))"

    /// The columns `PostgresSession.decodeMember` reads, in order.
    static let memberColumns = "m.uid, u.name, u.avatar, m.scope, m.joined_at, m.muted_until, m.mute_reason"

    /// The columns `PostgresSession.decodeBan` reads, in order.
    static let banColumns =
        "b.uid, u.name, u.avatar, b.scope_before, b.joined_at, b.banned_at, b.banned_by, b.reason, b.expires_at"

    /// The columns `PostgresSession.decodeAppBan` reads, in order.
    static let appBanColumns =
        "x.uid, u.name, u.avatar, x.banned_at, x.banned_by, x.reason, x.expires_at, x.shadow"

    /// The columns `PostgresSession.decodeInvite` reads, in order.
    static let inviteColumns = "i.uid, u.name, u.avatar, i.scope, i.invited_by, i.invited_at, i.expires_at"

    /// The columns `PostgresSession.decodeReport` reads, in order.
    static let reportColumns =
        "r.id, r.reporter, r.target, r.category, r.text, r.resolution, r.note, r.created_at, r.resolved_at, r.resolved_by"

    /// The columns `PostgresSession.actions` reads, in order.
    static let actionColumns = """
        a.seq, a.group_id, a.revision, a.kind, a.by_uid, a.on_uid, a.members_count, a.version, a.old_scope,
        a.new_scope, a.reason, a.expires_at, a.timestamp, a.idempotency_key, a.request_id, a.report_id, a.shadow,
        a.rules_added, a.rules_removed
        """

    /// The columns `PostgresSession.decodeContentRule` reads, in order.
    static let contentRuleColumns = "id, guid, kind, pattern, action, description, created_at, created_by"

    /// The columns `PostgresSession.decodeWebhook` reads, in order, from a `webhooks` row named
    /// `w` joined to its app `a`.
    static let webhookColumns = """
        w.app_id, a.name, w.id, w.url, w.kinds, w.guids, w.description, w.enabled, w.created_at, w.secret,
        w.generation, w.last_delivered_seq, w.consecutive_failures, w.last_error, w.next_attempt_at, w.failing_since
        """

    /// What an action row (`a`, of app $1) refers to, resolved in its statement
    /// (`PostgresSession.actions`): the group's revision it shows (`r`), then its actor (`bu`) and
    /// its target (`ou`) as live users (NULL when deleted, or the app).
    static let actionResolvedColumns = """
        r.guid, r.name, r.icon, r.description, r.type, r.metadata, r.tags, r.owner, r.created_at, r.updated_at,
        r.frozen, r.join_requests,
        bu.id, bu.uid, bu.name, bu.avatar, bu.metadata, bu.created_at,
        ou.id, ou.uid, ou.name, ou.avatar, ou.metadata, ou.created_at
        """
    /// The joins behind `actionResolvedColumns`. The users are probes of their key (`probe`):
    /// joined directly, a plan made for the values (a prepared statement's first five runs on a
    /// connection) hashed every user of the app for a page of 500 actions (`KeyProbeTests`).
    static let actionResolvedFrom = """
        LEFT JOIN group_revisions r ON r.group_id = a.group_id AND r.revision = a.revision
        LEFT JOIN \(probe("users", as: "bu", where: "bu.app_id = $1 AND bu.uid = a.by_uid AND bu.deleted_at = 0")) ON true
        LEFT JOIN \(probe("users", as: "ou", where: "ou.app_id = $1 AND ou.uid = a.on_uid AND ou.deleted_at = 0")) ON true
        """

    /// The member list's filter: $1 group, $2/$3 keyset (joined_at, uid), $4 scope mask, $6 muted
    /// at (0: every member; else only those muted then); $5 limit.
    static let membersFrom = "FROM members m JOIN users u ON u.id = m.user_id \(membersWhere)"
    static let membersWhere = """
        WHERE m.group_id = $1 AND (m.joined_at, m.uid) > ($2::bigint, $3::text)
          AND ((1::bigint << m.scope) & $4::bigint) <> 0
          AND ($6::bigint = 0 OR m.muted_until = -1 OR m.muted_until > $6::bigint)
        """
    static let membersOrder = "ORDER BY m.joined_at, m.uid LIMIT $5"

    /// The banned list's filter: $1 group, $2/$3 keyset (banned_at descending, uid), $4 now
    /// (expired bans are left out); $5 limit.
    static let bansFrom = """
        FROM bans b JOIN users u ON u.id = b.user_id
        WHERE b.group_id = $1 AND b.banned_at <= $2::bigint AND (b.banned_at < $2::bigint OR b.uid > $3::text)
          AND (b.expires_at = 0 OR b.expires_at > $4::bigint)
        """
    static let bansOrder = "ORDER BY b.banned_at DESC, b.uid LIMIT $5"

    /// The app's bans, as a group's: $1 app, $2/$3 keyset (banned_at descending, uid), $4 now
    /// (expired bans are left out); $5 limit.
    static let appBansFrom = """
        FROM app_bans x JOIN users u ON u.id = x.user_id
        WHERE x.app_id = $1 AND x.banned_at <= $2::bigint AND (x.banned_at < $2::bigint OR x.uid > $3::text)
          AND (x.expires_at = 0 OR x.expires_at > $4::bigint)
        """
    static let appBansOrder = "ORDER BY x.banned_at DESC, x.uid LIMIT $5"

    /// The group list's filter: $1 app, $2 viewer uid ('' for the app), $3 true when the app
    /// asks, $4/$5 keyset, $6 type mask, $7 tags (text[], NULL for any), $8 now; $9 limit. `m`
    /// is the viewer's membership row (NULL when none).
    static let groupsFilter = """
        (g.created_at, g.guid) > ($4::bigint, $5::text)
        AND ((1::bigint << g.type) & $6::bigint) <> 0
        AND ($7::text[] IS NULL OR EXISTS (SELECT 1 FROM group_tags t WHERE t.group_id = g.id AND t.tag = ANY ($7::text[])))
        AND ($3::boolean OR g.type <> 3 OR m.uid IS NOT NULL)
        AND ($3::boolean OR NOT EXISTS (SELECT 1 FROM bans b WHERE b.group_id = g.id AND b.uid = $2::text
                                          AND (b.expires_at = 0 OR b.expires_at > $8::bigint)))
        """
    static let groupsFrom = """
        FROM groups g LEFT JOIN members m ON m.group_id = g.id AND m.uid = $2::text AND \(readFromTable("m"))
        WHERE g.app_id = $1 AND \(groupsFilter)
        """
    /// The viewer's own groups, found through their memberships.
    static let groupsJoinedFrom = """
        FROM members m JOIN groups g ON g.id = m.group_id
        WHERE m.user_id = \(userID()) AND \(groupsFilter)
        """
    static let groupsOrder = "ORDER BY g.created_at, g.guid LIMIT $9"
}
