/// Every SQL statement the store runs, prepared once per connection and cached by case.
enum Query: Int, CaseIterable {
    case beginDeferred, beginImmediate, commit, rollback

    case appByName, insertApp, appLog, setAppHead, appsToPrune, setPrunedThrough

    case userByUID, insertUser, userFolded, updateUser, uidRetired, markUserDeleted

    case groupByGUID, insertGroup, updateGroupCounters, updateGroupAll, groupFolded, deleteGroup
    case insertRevision, supersedeRevision, revision, supersededRevisions, firstRetainedRevision, deleteRevision
    case deleteTags, insertTag
    case groupsPage, groupsPageSearch, groupsPageJoined

    case membership, insertMember, deleteMember, setScope, setMute, membersPage, membersPageScan, membersPageSearch
    case groupsOfUser, expiredMutes, postingGroup

    case ban, banExpiry, insertBan, deleteBan, bansPage, bansPageScan, bansPageSearch, expiredBans, groupsBanningUser
    case appBan, insertAppBan, deleteAppBan, appBansPage, appBansPageScan, appBansPageSearch, expiredAppBans, allAppBans

    case invite, upsertInvite, deleteInvite, invitesPage, invitesOfUser, purgeInvites, deleteInvitesOfUser
    case joinRequest, insertJoinRequest, deleteJoinRequest, joinRequestsPage, joinRequestCount
    case deleteJoinRequestsOfUser
    case report, openReport, reportsPage, reportCounts, reportsFiled, insertReport, resolveReport
    case contentRulesPage, contentRuleCount, contentRuleByID, contentRuleByPattern, contentRuleSetVersions
    case insertContentRule, deleteContentRule, setContentRuleSetVersion, deleteContentRulesOfSet, deleteContentRuleSet
    case webhooksOfApp, allWebhooks, insertWebhook, updateWebhook, deleteWebhook, claimWebhookLease
    case releaseWebhookLeases, recordWebhookDelivery

    case insertAction, actionsOfApp, actionsOfGroup, hasActionsOn, pruneScan, pruneDelete

    case gramCount, gramIDs, gramIDsOfTwo, gramInsert, gramDelete, gramCountAdd

    case idempotentReply, saveReply, purgeReplies

    /// The columns `SQLiteSession.decodeGroup` reads, in order, from a `groups` row named `g`.
    static let groupColumns = """
        g.id, g.revision, g.guid, g.name, g.icon, g.description, g.type, g.password_hash, g.metadata, g.tags, g.owner,
        g.members_count, g.version, g.created_at, g.updated_at, g.frozen, g.frozen_reason, g.join_requests
        """

    /// The columns `SQLiteSession.decodeMember` reads, in order.
    private static let memberColumns = "m.uid, u.name, u.avatar, m.scope, m.joined_at, m.muted_until, m.mute_reason"

    /// The columns `SQLiteSession.decodeInvite` reads, in order, after `first` others.
    static let inviteColumns = "i.uid, u.name, u.avatar, i.scope, i.invited_by, i.invited_at, i.expires_at"

    /// The columns `SQLiteSession.decodeReport` reads, in order.
    static let reportColumns =
        "r.id, r.reporter, r.target, r.category, r.text, r.resolution, r.note, r.created_at, r.resolved_at, r.resolved_by"

    /// The columns `SQLiteSession.decodeBan` reads, in order.
    private static let banColumns =
        "b.uid, u.name, u.avatar, b.scope_before, b.joined_at, b.banned_at, b.banned_by, b.reason, b.expires_at"

    /// The columns `SQLiteSession.decodeAppBan` reads, in order.
    private static let appBanColumns =
        "x.uid, u.name, u.avatar, x.banned_at, x.banned_by, x.reason, x.expires_at, x.shadow"

    /// One of a group's lists of users — its members or its bans — or the app's bans, paged by a
    /// keyset and searchable by uid or name: three statements, one per search plan, built from
    /// one shape.
    ///
    /// Parameters: ?1 the group (the app, for the app's bans), ?2–?4 `filter` (the keyset and the
    /// list's own filter), ?5 limit, ?6 the folded keyword (scan and search), ?7 the candidate user
    /// ids from the trigram index, as JSON (search). The search plan starts from the candidates
    /// and finds each one's row by (group, uid).
    struct UserList {
        let plain: Query
        let scan: Query
        let search: Query
        /// The list's rows, `table` as `alias`, with `uid` and `user_id` columns and its owner's
        /// key in `owner` (`group_id`, or `app_id` for the app's bans).
        let table: String
        let alias: String
        var owner = "group_id"
        let columns: String
        let filter: String
        let order: String
        /// What follows the table in the search plan (an `INDEXED BY`), or "".
        let searchHint: String

        /// ?2/?3 keyset (joined_at, uid), ?4 scope mask, ?8 muted at (0: everyone; else only
        /// members muted then).
        static let members = UserList(
            plain: .membersPage, scan: .membersPageScan, search: .membersPageSearch, table: "members", alias: "m",
            columns: Query.memberColumns,
            filter:
                "(m.joined_at, m.uid) > (?2, ?3) AND ((1 << m.scope) & ?4) != 0 AND (?8 = 0 OR m.muted_until = -1 OR m.muted_until > ?8)",
            order: "m.joined_at, m.uid", searchHint: "")

        /// A group's bans.
        static let bans = banList(
            plain: .bansPage, scan: .bansPageScan, search: .bansPageSearch, table: "bans", alias: "b",
            columns: Query.banColumns)

        /// The app's bans, as a group's.
        static let appBans = banList(
            plain: .appBansPage, scan: .appBansPageScan, search: .appBansPageSearch, table: "app_bans", alias: "x",
            owner: "app_id", columns: Query.appBanColumns)

        /// A list of bans: ?2/?3 keyset (banned_at descending, uid), ?4 now (expired bans are left
        /// out); searched through the table's unique index on (owner, uid), `<table>_by_uid`.
        private static func banList(
            plain: Query, scan: Query, search: Query, table: String, alias: String, owner: String = "group_id",
            columns: String
        ) -> UserList {
            UserList(
                plain: plain, scan: scan, search: search, table: table, alias: alias, owner: owner, columns: columns,
                filter: """
                    \(alias).banned_at <= ?2 AND (\(alias).banned_at < ?2 OR \(alias).uid > ?3) \
                    AND (\(alias).expires_at = 0 OR \(alias).expires_at > ?4)
                    """,
                order: "\(alias).banned_at DESC, \(alias).uid", searchHint: " INDEXED BY \(table)_by_uid")
        }

        /// The statement that runs `plan`.
        func query(for plan: SearchPlan) -> Query {
            switch plan {
            case .none: plain
            case .scan: scan
            case .candidates: search
            }
        }

        /// The SQL of `query`, one of this list's three statements.
        func sql(_ query: Query) -> String {
            let keyword = "(instr(\(alias).uid, ?6) > 0 OR instr(u.name_folded, ?6) > 0)"
            switch query {
            case search:
                return """
                    SELECT \(columns) FROM json_each(?7) j CROSS JOIN users u CROSS JOIN \(table) \(alias)\(searchHint)
                    WHERE u.id = j.value AND \(alias).\(owner) = ?1 AND \(alias).uid = u.uid AND \(filter) AND \(keyword)
                    ORDER BY \(order) LIMIT ?5
                    """
            default:
                return """
                    SELECT \(columns) FROM \(table) \(alias) JOIN users u ON u.id = \(alias).user_id
                    WHERE \(alias).\(owner) = ?1 AND \(filter)\(query == scan ? " AND " + keyword : "")
                    ORDER BY \(order) LIMIT ?5
                    """
            }
        }
    }

    /// The columns `SQLiteSession.actions` reads, in order.
    private static let actionColumns = """
        a.id, a.group_id, a.revision, a.kind, a.by_uid, a.on_uid, a.members_count, a.version, a.old_scope, a.new_scope,
        a.reason, a.expires_at, a.timestamp, a.idempotency_key, a.request_id, a.report_id, a.shadow, a.rules_added,
        a.rules_removed
        """

    /// The columns `SQLiteSession.decodeContentRule` reads, in order.
    static let contentRuleColumns = "id, guid, kind, pattern, action, description, created_at, created_by"

    /// The columns `SQLiteSession.decodeWebhook` reads, in order, from a `webhooks` row named `w`
    /// joined to its app `a`.
    static let webhookColumns = """
        w.app_id, a.name, w.id, w.url, w.kinds, w.guids, w.description, w.enabled, w.created_at, w.secret,
        w.generation, w.last_delivered_seq, w.consecutive_failures, w.last_error, w.next_attempt_at, w.failing_since
        """

    // Shared filters of the group list: ?2 viewer uid ('' for the app), ?3 1 when the app asks,
    // ?4/?5 keyset, ?6 type mask, ?7 tags as a JSON array ('' for none), ?8 now, ?9 limit.
    private static let groupsFilter = """
        (g.created_at, g.guid) > (?4, ?5)
        AND ((1 << g.type) & ?6) != 0
        AND (?7 = '' OR EXISTS (SELECT 1 FROM group_tags t WHERE t.group_id = g.id AND t.tag IN (SELECT value FROM json_each(?7))))
        AND (?3 = 1 OR g.type != 3 OR m.uid IS NOT NULL)
        AND (?3 = 1 OR NOT EXISTS (SELECT 1 FROM bans b WHERE b.group_id = g.id AND b.uid = ?2 AND (b.expires_at = 0 OR b.expires_at > ?8)))
        """

    var sql: String {
        switch self {
        case .beginDeferred: "BEGIN DEFERRED"
        case .beginImmediate: "BEGIN IMMEDIATE"
        case .commit: "COMMIT"
        case .rollback: "ROLLBACK"

        case .appByName: "SELECT id FROM apps WHERE name = ?1"
        case .insertApp: "INSERT INTO apps (name) VALUES (?1)"
        case .appLog: "SELECT name, head_seq, pruned_through FROM apps WHERE id = ?1"
        case .setAppHead: "UPDATE apps SET head_seq = ?2 WHERE id = ?1"
        case .appsToPrune:
            // The apps (at most ?2) whose log begins with an action older than ?1, the cutoff:
            // one probe of the first unpruned action of each app that has any (`ActionID`), not
            // a scan of up to a batch of actions of every app.
            """
            SELECT a.id, a.pruned_through FROM apps a
            WHERE a.head_seq > a.pruned_through
              AND (SELECT x.timestamp FROM actions x
                   WHERE x.id > (a.id << \(ActionID.seqBits)) + a.pruned_through
                     AND x.id <= (a.id << \(ActionID.seqBits)) + \(ActionID.maxSeq)
                   ORDER BY x.id LIMIT 1) < ?1
            ORDER BY a.id LIMIT ?2
            """
        case .setPrunedThrough: "UPDATE apps SET pruned_through = ?2 WHERE id = ?1"

        case .userByUID:
            "SELECT id, uid, name, avatar, metadata, created_at FROM users WHERE app_id = ?1 AND uid = ?2 AND deleted_at = 0"
        case .uidRetired: "SELECT 1 FROM users WHERE app_id = ?1 AND uid = ?2 AND deleted_at != 0"
        case .markUserDeleted: "UPDATE users SET deleted_at = ?2 WHERE id = ?1"
        case .insertUser:
            "INSERT INTO users (app_id, uid, name, name_folded, avatar, metadata, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
        case .userFolded: "SELECT uid, name_folded, app_id FROM users WHERE id = ?1"
        case .updateUser: "UPDATE users SET name = ?2, name_folded = ?3, avatar = ?4, metadata = ?5 WHERE id = ?1"

        case .groupByGUID: "SELECT \(Self.groupColumns) FROM groups g WHERE g.app_id = ?1 AND g.guid = ?2"
        case .insertGroup:
            """
            INSERT INTO groups (app_id, guid, name, name_folded, icon, description, type, password_hash, metadata, tags, owner,
                                members_count, version, revision, created_at, updated_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
            """
        case .updateGroupCounters: "UPDATE groups SET members_count = ?2, version = ?3 WHERE id = ?1"
        case .updateGroupAll:
            """
            UPDATE groups SET name = ?2, name_folded = ?3, icon = ?4, description = ?5, type = ?6, password_hash = ?7,
                metadata = ?8, tags = ?9, owner = ?10, members_count = ?11, version = ?12, revision = ?13, updated_at = ?14,
                frozen = ?15, frozen_reason = ?16, join_requests = ?17
            WHERE id = ?1
            """
        case .groupFolded: "SELECT guid, name_folded, app_id FROM groups WHERE id = ?1"
        case .deleteGroup: "DELETE FROM groups WHERE id = ?1"
        case .insertRevision:
            """
            INSERT INTO group_revisions (group_id, revision, guid, name, icon, description, type, metadata, tags, owner,
                                         created_at, updated_at, frozen, join_requests)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
            """
        case .supersedeRevision: "UPDATE group_revisions SET superseded_at = ?3 WHERE group_id = ?1 AND revision = ?2"
        case .revision:
            """
            SELECT guid, name, icon, description, type, metadata, tags, owner, created_at, updated_at, frozen,
                join_requests
            FROM group_revisions WHERE group_id = ?1 AND revision = ?2
            """
        case .supersededRevisions:
            """
            SELECT group_id, revision FROM group_revisions
            WHERE superseded_at IS NOT NULL AND superseded_at < ?1 ORDER BY superseded_at LIMIT ?2
            """
        case .deleteRevision: "DELETE FROM group_revisions WHERE group_id = ?1 AND revision = ?2"
        case .deleteTags: "DELETE FROM group_tags WHERE group_id = ?1"
        case .insertTag: "INSERT INTO group_tags (group_id, tag) VALUES (?1, ?2)"
        case .groupsPage:
            // ?10: folded keyword for a scan ('' for none).
            """
            SELECT \(Self.groupColumns), m.scope, m.joined_at
            FROM groups g LEFT JOIN members m ON m.group_id = g.id AND m.uid = ?2
            WHERE g.app_id = ?1 AND \(Self.groupsFilter)
              AND (?10 = '' OR instr(g.guid, ?10) > 0 OR instr(g.name_folded, ?10) > 0)
            ORDER BY g.created_at, g.guid LIMIT ?9
            """
        case .groupsPageSearch:
            // ?10 as in groupsPage; ?11: the candidate ids from the trigram index, as JSON.
            """
            SELECT \(Self.groupColumns), m.scope, m.joined_at
            FROM json_each(?11) j CROSS JOIN groups g LEFT JOIN members m ON m.group_id = g.id AND m.uid = ?2
            WHERE g.id = j.value AND g.app_id = ?1 AND \(Self.groupsFilter)
              AND (instr(g.guid, ?10) > 0 OR instr(g.name_folded, ?10) > 0)
            ORDER BY g.created_at, g.guid LIMIT ?9
            """
        case .groupsPageJoined:
            // The viewer's groups, found through their memberships; ?10 as in groupsPage.
            """
            SELECT \(Self.groupColumns), m.scope, m.joined_at
            FROM users u CROSS JOIN members m CROSS JOIN groups g
            WHERE u.app_id = ?1 AND u.uid = ?2 AND m.user_id = u.id AND g.id = m.group_id AND \(Self.groupsFilter)
              AND (?10 = '' OR instr(g.guid, ?10) > 0 OR instr(g.name_folded, ?10) > 0)
            ORDER BY g.created_at, g.guid LIMIT ?9
            """

        case .membership:
            "SELECT scope, joined_at, muted_until, mute_reason FROM members WHERE group_id = ?1 AND uid = ?2"
        case .insertMember: "INSERT INTO members (group_id, uid, user_id, scope, joined_at) VALUES (?1, ?2, ?3, ?4, ?5)"
        case .deleteMember: "DELETE FROM members WHERE group_id = ?1 AND uid = ?2"
        case .setScope: "UPDATE members SET scope = ?3 WHERE group_id = ?1 AND uid = ?2"
        case .setMute: "UPDATE members SET muted_until = ?3, mute_reason = ?4 WHERE group_id = ?1 AND uid = ?2"
        case .membersPage, .membersPageScan, .membersPageSearch: UserList.members.sql(self)
        case .groupsOfUser:
            """
            SELECT g.guid FROM users u JOIN members m ON m.user_id = u.id JOIN groups g ON g.id = m.group_id
            WHERE u.app_id = ?1 AND u.uid = ?2 ORDER BY g.guid
            """
        case .expiredMutes:
            """
            SELECT a.id, a.name, g.guid, m.uid FROM members m JOIN groups g ON g.id = m.group_id JOIN apps a ON a.id = g.app_id
            WHERE m.muted_until > 0 AND m.muted_until <= ?1 ORDER BY m.muted_until LIMIT ?2
            """
        case .postingGroup: "SELECT id, type, frozen, version FROM groups WHERE app_id = ?1 AND guid = ?2"

        case .ban:
            "SELECT \(Self.banColumns) FROM bans b JOIN users u ON u.id = b.user_id WHERE b.group_id = ?1 AND b.uid = ?2"
        case .banExpiry: "SELECT expires_at FROM bans WHERE group_id = ?1 AND uid = ?2"
        case .insertBan:
            """
            INSERT INTO bans (group_id, uid, user_id, scope_before, joined_at, banned_at, banned_by, reason, expires_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
            """
        case .gramCount: "SELECT count FROM search_gram_counts WHERE kind = ?1 AND app_id = ?2 AND gram = ?3"
        case .gramIDs: "SELECT id FROM search_grams WHERE kind = ?1 AND app_id = ?2 AND gram = ?3"
        case .gramIDsOfTwo:
            """
            SELECT a.id FROM search_grams a JOIN search_grams b ON b.kind = a.kind AND b.app_id = a.app_id AND b.gram = ?4 AND b.id = a.id
            WHERE a.kind = ?1 AND a.app_id = ?2 AND a.gram = ?3
            """
        case .gramInsert: "INSERT INTO search_grams (kind, app_id, gram, id) VALUES (?1, ?2, ?3, ?4)"
        case .gramDelete: "DELETE FROM search_grams WHERE kind = ?1 AND app_id = ?2 AND gram = ?3 AND id = ?4"
        case .gramCountAdd:
            """
            INSERT INTO search_gram_counts (kind, app_id, gram, count) VALUES (?1, ?2, ?3, ?4)
            ON CONFLICT (kind, app_id, gram) DO UPDATE SET count = count + excluded.count
            """
        case .deleteBan: "DELETE FROM bans WHERE group_id = ?1 AND uid = ?2"
        case .groupsBanningUser:
            """
            SELECT g.guid FROM users u JOIN bans b ON b.user_id = u.id JOIN groups g ON g.id = b.group_id
            WHERE u.app_id = ?1 AND u.uid = ?2 AND u.deleted_at = 0 ORDER BY g.guid
            """
        case .bansPage, .bansPageScan, .bansPageSearch: UserList.bans.sql(self)

        case .appBan:
            """
            SELECT \(Self.appBanColumns) FROM app_bans x JOIN users u ON u.id = x.user_id
            WHERE x.app_id = ?1 AND x.uid = ?2
            """
        case .insertAppBan:
            """
            INSERT INTO app_bans (app_id, uid, user_id, banned_at, banned_by, reason, expires_at, shadow)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            """
        case .deleteAppBan: "DELETE FROM app_bans WHERE app_id = ?1 AND uid = ?2"
        case .appBansPage, .appBansPageScan, .appBansPageSearch: UserList.appBans.sql(self)
        case .expiredAppBans:
            """
            SELECT a.id, a.name, x.uid FROM app_bans x JOIN apps a ON a.id = x.app_id
            WHERE x.expires_at > 0 AND x.expires_at <= ?1 ORDER BY x.expires_at LIMIT ?2
            """
        case .allAppBans: "SELECT app_id, uid, expires_at, shadow FROM app_bans"
        case .expiredBans:
            """
            SELECT a.id, a.name, g.guid, b.uid FROM bans b JOIN groups g ON g.id = b.group_id JOIN apps a ON a.id = g.app_id
            WHERE b.expires_at > 0 AND b.expires_at <= ?1 ORDER BY b.expires_at LIMIT ?2
            """

        case .invite:
            "SELECT \(Self.inviteColumns) FROM invites i JOIN users u ON u.id = i.user_id WHERE i.group_id = ?1 AND i.uid = ?2"
        case .upsertInvite:
            """
            INSERT INTO invites (group_id, uid, user_id, scope, invited_by, invited_at, expires_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            ON CONFLICT (group_id, uid) DO UPDATE SET scope = excluded.scope, invited_by = excluded.invited_by,
                invited_at = excluded.invited_at, expires_at = excluded.expires_at
            """
        case .deleteInvite: "DELETE FROM invites WHERE group_id = ?1 AND uid = ?2"
        case .invitesPage:
            // ?2/?3 keyset (invited_at descending, uid), ?4 now, ?5 limit.
            """
            SELECT \(Self.inviteColumns) FROM invites i INDEXED BY invites_by_group JOIN users u ON u.id = i.user_id
            WHERE i.group_id = ?1 AND (i.invited_at < ?2 OR (i.invited_at = ?2 AND i.uid > ?3)) AND i.expires_at > ?4
            ORDER BY i.invited_at DESC, i.uid LIMIT ?5
            """
        case .invitesOfUser:
            // ?1 app, ?2 uid, ?3/?4 keyset (invited_at descending, guid), ?5 now, ?6 limit.
            """
            SELECT \(Self.groupColumns), \(Self.inviteColumns)
            FROM users u CROSS JOIN invites i CROSS JOIN groups g
            WHERE u.app_id = ?1 AND u.uid = ?2 AND i.user_id = u.id AND g.id = i.group_id
              AND (i.invited_at < ?3 OR (i.invited_at = ?3 AND g.guid > ?4)) AND i.expires_at > ?5
            ORDER BY i.invited_at DESC, g.guid LIMIT ?6
            """
        case .purgeInvites:
            """
            DELETE FROM invites WHERE (group_id, uid) IN
                (SELECT group_id, uid FROM invites WHERE expires_at <= ?1 ORDER BY expires_at LIMIT ?2)
            """
        case .deleteInvitesOfUser: "DELETE FROM invites WHERE user_id = ?1"
        case .joinRequest:
            """
            SELECT r.uid, u.name, u.avatar, r.message, r.requested_at FROM join_requests r JOIN users u ON u.id = r.user_id
            WHERE r.group_id = ?1 AND r.uid = ?2
            """
        case .insertJoinRequest:
            "INSERT INTO join_requests (group_id, uid, user_id, message, requested_at) VALUES (?1, ?2, ?3, ?4, ?5)"
        case .deleteJoinRequest: "DELETE FROM join_requests WHERE group_id = ?1 AND uid = ?2"
        case .joinRequestsPage:
            // ?2/?3 keyset (requested_at, uid), ?4 limit.
            """
            SELECT r.uid, u.name, u.avatar, r.message, r.requested_at
            FROM join_requests r INDEXED BY join_requests_by_time JOIN users u ON u.id = r.user_id
            WHERE r.group_id = ?1 AND (r.requested_at, r.uid) > (?2, ?3)
            ORDER BY r.requested_at, r.uid LIMIT ?4
            """
        case .joinRequestCount: "SELECT count(*) FROM join_requests WHERE group_id = ?1"
        case .deleteJoinRequestsOfUser: "DELETE FROM join_requests WHERE user_id = ?1"
        case .report: "SELECT \(Self.reportColumns) FROM reports r WHERE r.group_id = ?1 AND r.id = ?2"
        case .openReport:
            "SELECT \(Self.reportColumns) FROM reports r WHERE r.group_id = ?1 AND r.reporter = ?2 AND r.target = ?3 AND r.resolution = 0"
        case .reportsPage:
            // ?2 open (1) or resolved (0), ?3 after id, ?4 limit.
            """
            SELECT \(Self.reportColumns) FROM reports r
            WHERE r.group_id = ?1 AND (r.resolution = 0) = (?2 = 1) AND r.id > ?3 ORDER BY r.id LIMIT ?4
            """
        case .reportCounts:
            "SELECT target, count(*) FROM reports WHERE group_id = ?1 AND (resolution = 0) = (?2 = 1) GROUP BY target"
        case .reportsFiled: "SELECT count(*) FROM reports WHERE app_id = ?1 AND reporter = ?2 AND created_at >= ?3"
        case .insertReport:
            """
            INSERT INTO reports (app_id, group_id, reporter, target, category, text, created_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            """
        case .resolveReport:
            "UPDATE reports SET resolution = ?3, note = ?4, resolved_at = ?5, resolved_by = ?6 WHERE group_id = ?1 AND id = ?2"

        case .contentRulesPage:
            // ?3 after id, ?4 limit.
            """
            SELECT \(Self.contentRuleColumns) FROM content_rules
            WHERE app_id = ?1 AND guid = ?2 AND id > ?3 ORDER BY id LIMIT ?4
            """
        case .contentRuleCount: "SELECT count(*) FROM content_rules WHERE app_id = ?1 AND guid = ?2"
        case .contentRuleByID:
            "SELECT \(Self.contentRuleColumns) FROM content_rules WHERE id = ?3 AND app_id = ?1 AND guid = ?2"
        case .contentRuleByPattern:
            """
            SELECT \(Self.contentRuleColumns) FROM content_rules
            WHERE app_id = ?1 AND guid = ?2 AND kind = ?3 AND pattern = ?4
            """
        case .contentRuleSetVersions: "SELECT app_id, guid, version FROM content_rule_sets"
        case .insertContentRule:
            """
            INSERT INTO content_rules (app_id, guid, kind, pattern, action, description, created_at, created_by)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            """
        case .deleteContentRule: "DELETE FROM content_rules WHERE id = ?2 AND app_id = ?1"
        case .setContentRuleSetVersion:
            """
            INSERT INTO content_rule_sets (app_id, guid, version) VALUES (?1, ?2, ?3)
            ON CONFLICT (app_id, guid) DO UPDATE SET version = excluded.version
            """
        case .deleteContentRulesOfSet: "DELETE FROM content_rules WHERE app_id = ?1 AND guid = ?2"
        case .deleteContentRuleSet: "DELETE FROM content_rule_sets WHERE app_id = ?1 AND guid = ?2"

        case .webhooksOfApp:
            """
            SELECT \(Self.webhookColumns) FROM webhooks w JOIN apps a ON a.id = w.app_id
            WHERE w.app_id = ?1 ORDER BY w.created_at, w.id
            """
        case .allWebhooks:
            """
            SELECT \(Self.webhookColumns) FROM webhooks w JOIN apps a ON a.id = w.app_id
            ORDER BY w.app_id, w.created_at, w.id
            """
        case .insertWebhook:
            """
            INSERT INTO webhooks (app_id, id, url, kinds, guids, description, enabled, created_at, secret, generation,
                                  last_delivered_seq, consecutive_failures, last_error, next_attempt_at, failing_since,
                                  lease_owner, lease_expires_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, NULL, 0)
            """
        case .updateWebhook:
            // The same parameters as insertWebhook; the lease stays.
            """
            UPDATE webhooks SET url = ?3, kinds = ?4, guids = ?5, description = ?6, enabled = ?7, created_at = ?8,
                secret = ?9, generation = ?10, last_delivered_seq = ?11, consecutive_failures = ?12, last_error = ?13,
                next_attempt_at = ?14, failing_since = ?15
            WHERE id = ?2 AND app_id = ?1
            """
        case .deleteWebhook: "DELETE FROM webhooks WHERE id = ?2 AND app_id = ?1"
        case .claimWebhookLease:
            // ?1 id, ?2 owner, ?3 now, ?4 expires at.
            """
            UPDATE webhooks SET lease_owner = ?2, lease_expires_at = ?4
            WHERE id = ?1 AND (lease_owner IS NULL OR lease_owner = ?2 OR lease_expires_at <= ?3)
            """
        case .releaseWebhookLeases:
            "UPDATE webhooks SET lease_owner = NULL, lease_expires_at = 0 WHERE lease_owner = ?1"
        case .recordWebhookDelivery:
            // ?1 id, ?2 owner, ?3 generation, ?4 enabled, ?5–?9 the status.
            """
            UPDATE webhooks SET enabled = ?4, last_delivered_seq = ?5, consecutive_failures = ?6, last_error = ?7,
                next_attempt_at = ?8, failing_since = ?9
            WHERE id = ?1 AND lease_owner = ?2 AND generation = ?3
            """

        case .insertAction:
            """
            INSERT INTO actions (id, group_id, revision, kind, by_uid, on_uid, members_count, version, old_scope, new_scope,
                                 reason, expires_at, timestamp, idempotency_key, request_id, report_id, shadow,
                                 rules_added, rules_removed)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)
            """
        case .actionsOfApp:
            // ?1/?2: the id range (the app's seqs after the start), ?3 kind mask, ?4 actor or NULL,
            // ?5 target or NULL, ?6 limit.
            """
            SELECT \(Self.actionColumns) FROM actions a
            WHERE a.id > ?1 AND a.id <= ?2 AND ((1 << a.kind) & ?3) != 0
              AND (?4 IS NULL OR a.by_uid = ?4) AND (?5 IS NULL OR a.on_uid = ?5)
            ORDER BY a.id LIMIT ?6
            """
        case .actionsOfGroup:
            // ?7 group; the rest as actionsOfApp (a group belongs to one app, so id order is seq order).
            """
            SELECT \(Self.actionColumns) FROM actions a
            WHERE a.group_id = ?7 AND a.id > ?1 AND a.id <= ?2 AND ((1 << a.kind) & ?3) != 0
              AND (?4 IS NULL OR a.by_uid = ?4) AND (?5 IS NULL OR a.on_uid = ?5)
            ORDER BY a.id LIMIT ?6
            """
        case .hasActionsOn: "SELECT 1 FROM actions WHERE group_id = ?1 AND on_uid = ?2 LIMIT 1"
        case .pruneScan: "SELECT id, timestamp FROM actions WHERE id > ?1 AND id <= ?2 ORDER BY id LIMIT ?3"
        case .pruneDelete: "DELETE FROM actions WHERE id > ?1 AND id <= ?2"
        case .firstRetainedRevision: "SELECT revision FROM actions WHERE group_id = ?1 ORDER BY id LIMIT 1"

        case .idempotentReply:
            "SELECT reply FROM idempotency WHERE app_id = ?1 AND actor = ?2 AND key = ?3 AND created_at >= ?4"
        case .saveReply:
            "INSERT OR REPLACE INTO idempotency (app_id, actor, key, created_at, reply) VALUES (?1, ?2, ?3, ?4, ?5)"
        case .purgeReplies:
            """
            DELETE FROM idempotency WHERE (app_id, actor, key) IN
                (SELECT app_id, actor, key FROM idempotency WHERE created_at < ?1 ORDER BY created_at LIMIT ?2)
            """
        }
    }
}
