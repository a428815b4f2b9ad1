/// Every SQL statement the store prepares, once per connection (named `s<raw value>`).
///
/// Parameters are `$n`; where PostgreSQL cannot infer a parameter's type from its use, the
/// statement casts it. Searches are not here: their plan depends on the keyword, so they run
/// unprepared (`SearchSQL`), planned for each keyword.
enum Statement: Int, CaseIterable {
    case beginWrite, beginRead, commit, rollback, notifyCommit

    case appByName, lockApp, lockAppSkipping, lockAppByID, lockAppByIDSkipping, insertApp, appLog, setAppHead,
        appDataVersion
    case appsToPrune, lockAppForPruning, setPrunedThrough

    case userByUID, standing, prefetch, insertUser, updateUser, uidRetired, markUserDeleted

    case groupByGUID, groupWithMembership, insertGroup, updateGroupCounters, updateGroupAll, appOfGroup,
        deleteGroup
    case insertRevision, supersedeRevision, supersededRevisions, firstRetainedRevision, deleteRevision
    case deleteTags, insertTags
    case groupsPage, groupsPageJoined

    case membership, insertMember, deleteMember, setScope, setMute, membersPage, groupsOfUser, expiredMutes
    case postingStandings

    case ban, insertBan, deleteBan, bansPage, expiredBans, groupsBanningUser

    case appBan, appBanStanding, appBansOfApp, insertAppBan, deleteAppBan, appBansPage, expiredAppBans

    case invite, upsertInvite, deleteInvite, invitesPage, invitesOfUser, purgeInvites, deleteInvitesOfUser
    case joinRequest, insertJoinRequest, deleteJoinRequest, joinRequestsPage, joinRequestCount
    case deleteJoinRequestsOfUser
    case report, openReport, reportsPage, reportCounts, reportsFiled, insertReport, resolveReport
    case contentRulesPage, contentRuleCount, contentRuleByID, contentRuleByPattern, contentRuleSetVersions
    case insertContentRule, deleteContentRule, setContentRuleSetVersion, deleteContentRulesOfSet, deleteContentRuleSet
    case webhooksOfApp, allWebhooks, insertWebhook, updateWebhook, deleteWebhook, webhookExists,
        lockWebhookSkipping, claimWebhookLease, leasedWebhooks, lockLeasedWebhooksSkipping, releaseWebhookLeases,
        recordWebhookDelivery

    case insertActions, actionsOfApp, actionsOfGroup, hasActionsOn, pruneScan, pruneDelete

    case idempotentReply, prefetchReplies, saveReply, purgeReplies

    case passwordFailures, passwordFailuresOfPairs, recordPasswordFailure, clearPasswordFailures, purgePasswordFailures

    case leaseRateTokens

    /// The prepared statement's name on the server.
    var name: String { "s\(rawValue)" }

    /// True for statements that change rows: a write that sent one cannot be undone without
    /// rolling the transaction back (see `PostgresSession.restoreIfUnchanged`).
    var changesRows: Bool {
        switch self {
        case .insertApp, .setAppHead, .setPrunedThrough, .insertUser, .updateUser, .markUserDeleted, .insertGroup,
            .updateGroupCounters, .updateGroupAll, .deleteGroup, .insertRevision, .supersedeRevision, .deleteRevision,
            .deleteTags, .insertTags, .insertMember, .deleteMember, .setScope, .setMute, .insertBan, .deleteBan,
            .insertAppBan, .deleteAppBan,
            .upsertInvite, .deleteInvite, .purgeInvites, .deleteInvitesOfUser, .insertJoinRequest, .deleteJoinRequest,
            .deleteJoinRequestsOfUser, .insertReport, .resolveReport, .insertContentRule, .deleteContentRule,
            .setContentRuleSetVersion, .deleteContentRulesOfSet, .deleteContentRuleSet, .insertWebhook,
            .updateWebhook, .deleteWebhook, .claimWebhookLease, .releaseWebhookLeases, .recordWebhookDelivery,
            .insertActions,
            .pruneDelete, .saveReply, .purgeReplies, .recordPasswordFailure, .clearPasswordFailures,
            .purgePasswordFailures, .leaseRateTokens:
            true
        default:
            false
        }
    }

    var sql: String {
        switch self {
        case .beginWrite: "BEGIN ISOLATION LEVEL READ COMMITTED"
        case .beginRead: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
        case .commit: "COMMIT"
        case .rollback: "ROLLBACK"
        // Sent after COMMIT, so in a transaction of its own: NOTIFY takes a database-wide lock
        // held through its transaction's commit, which inside the batch's transaction would
        // serialize every instance's commits and their WAL flushes. Its own commit need not wait
        // for the flush: a lost notification costs one poll period.
        case .notifyCommit: "SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, $2)"

        case .appByName: "SELECT id FROM apps WHERE name = $1"
        // The app's lock: every write of an app takes it first (see PostgresSession+Apps), and
        // reads under it the head seq and the version of the app's bans from the app.
        case .lockApp: "SELECT id, head_seq, app_bans_version FROM apps WHERE name = $1 FOR NO KEY UPDATE"
        case .lockAppSkipping:
            "SELECT id, head_seq, app_bans_version FROM apps WHERE name = $1 FOR NO KEY UPDATE SKIP LOCKED"
        case .lockAppByID: "SELECT name, head_seq, app_bans_version FROM apps WHERE id = $1 FOR NO KEY UPDATE"
        case .lockAppByIDSkipping:
            "SELECT name, head_seq, app_bans_version FROM apps WHERE id = $1 FOR NO KEY UPDATE SKIP LOCKED"
        case .insertApp: "INSERT INTO apps (name) VALUES ($1) ON CONFLICT (name) DO NOTHING RETURNING id"
        case .appLog: "SELECT name, head_seq, pruned_through FROM apps WHERE id = $1"
        case .setAppHead: "UPDATE apps SET head_seq = $2, data_version = data_version + 1 WHERE id = $1"
        case .appDataVersion: "SELECT data_version, app_bans_version FROM apps WHERE id = $1"
        case .appsToPrune:
            // The apps (at most $2) whose log begins with an action older than $1, the cutoff:
            // one probe of the first unpruned action of each app that has any. Asking app by
            // app cost a round trip each, inside a writer's transaction: with 30 000 apps a pass
            // took 2.4 s, and the writes behind it waited that long.
            """
            SELECT a.id, a.pruned_through FROM apps a
            WHERE a.head_seq > a.pruned_through
              AND (SELECT x.timestamp FROM actions x WHERE x.app_id = a.id AND x.seq > a.pruned_through
                   ORDER BY x.seq LIMIT 1) < $1
            ORDER BY a.id LIMIT $2
            """
        case .lockAppForPruning: "SELECT pruned_through FROM apps WHERE id = $1 FOR NO KEY UPDATE SKIP LOCKED"
        case .setPrunedThrough: "UPDATE apps SET pruned_through = $2 WHERE id = $1"

        case .userByUID:
            "SELECT id, uid, name, avatar, metadata, created_at FROM users WHERE app_id = $1 AND uid = $2 AND deleted_at = 0"
        // A live user's standing in a group, for a writer: what `.userByUID`, `.membership` and
        // `.ban` return (the last two NULL when absent), in one round trip
        // (`PostgresSession.standing`). No row when there is no such user.
        case .standing:
            """
            SELECT \(Self.standingColumns)
            FROM users u
            LEFT JOIN members m ON m.group_id = $3 AND m.uid = $2 AND \(Self.readFromTable("m"))
            LEFT JOIN bans b ON b.group_id = $3 AND b.uid = $2
            LEFT JOIN users bu ON bu.id = b.user_id
            WHERE u.app_id = $1 AND u.uid = $2 AND u.deleted_at = 0
            """
        // A batch's footprints in one app (`PostgresSession.prefetch`): $1 app, $2 guids, $3 uids
        // ('' for none), pair by pair, $4 the app's name. Per pair: the group (no row lock: the
        // app's lock covers it), then the user's standing in it as `.standing` returns it
        // (NULL when there is no such live user), then the pair's uid and its wrong passwords
        // (`password_attempts.failures`, NULL when there are none). No row for a pair whose group
        // does not exist. The group, the user, the membership and the ban are each a subquery of
        // their own (`Statement.probe`), one probe of the whole key per pair, the membership and
        // the ban matched on the pair's uid, not the user row's (the same whenever the user is
        // read).
        case .prefetch:
            """
            SELECT \(Self.groupColumns), \(Self.standingColumns), c.uid,
                (SELECT pa.failures FROM password_attempts pa
                 WHERE pa.app = $4 AND pa.guid = c.guid COLLATE "C" AND pa.uid = c.uid COLLATE "C")
            FROM unnest($2::text[], $3::text[]) AS c (guid, uid)
            CROSS JOIN \(Self.probe("groups", as: "g", where: "g.app_id = $1 AND g.guid = c.guid COLLATE \"C\""))
            LEFT JOIN \(Self.probe("users", as: "u", where: "u.app_id = $1 AND u.uid = c.uid COLLATE \"C\" AND u.deleted_at = 0")) ON true
            LEFT JOIN \(Self.probe("members", as: "m", where: "m.group_id = g.id AND m.uid = c.uid COLLATE \"C\"", fromTable: true)) ON true
            LEFT JOIN \(Self.probe("bans", as: "b", where: "b.group_id = g.id AND b.uid = c.uid COLLATE \"C\"")) ON true
            LEFT JOIN users bu ON bu.id = b.user_id
            """
        case .uidRetired: "SELECT 1 FROM users WHERE app_id = $1 AND uid = $2 AND deleted_at <> 0"
        case .markUserDeleted: "UPDATE users SET deleted_at = $2 WHERE id = $1"
        case .insertUser:
            """
            INSERT INTO users (app_id, uid, name, name_folded, avatar, metadata, created_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id
            """
        case .updateUser: "UPDATE users SET name = $2, name_folded = $3, avatar = $4, metadata = $5 WHERE id = $1"

        case .groupByGUID: "SELECT \(Self.groupColumns) FROM groups g WHERE g.app_id = $1 AND g.guid = $2"
        case .groupWithMembership:
            // The membership a probe (`Statement.probe`): PostgreSQL estimates (app, guid) as
            // if the app and the guid were independent, so where many apps have a group of that
            // guid it expected hundreds of groups and scanned `members` whole for the uid.
            """
            SELECT \(Self.groupColumns), m.scope, m.joined_at, m.muted_until, m.mute_reason
            FROM groups g
            LEFT JOIN \(Self.probe("members", as: "m", where: "m.group_id = g.id AND m.uid = $3", fromTable: true)) ON true
            WHERE g.app_id = $1 AND g.guid = $2
            """
        case .insertGroup:
            """
            INSERT INTO groups (app_id, guid, name, name_folded, icon, description, type, password_hash, metadata, tags,
                                owner, members_count, version, revision, created_at, updated_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING id
            """
        // Groups' counters, any number in one statement: $1 ids, $2 members counts, $3 versions.
        case .updateGroupCounters:
            """
            UPDATE groups g SET members_count = c.members_count, version = c.version
            FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS c (id, members_count, version)
            WHERE g.id = c.id
            """
        case .updateGroupAll:
            """
            UPDATE groups SET name = $2, name_folded = $3, icon = $4, description = $5, type = $6, password_hash = $7,
                metadata = $8, tags = $9, owner = $10, members_count = $11, version = $12, revision = $13, updated_at = $14,
                frozen = $15, frozen_reason = $16, join_requests = $17
            WHERE id = $1
            """
        case .appOfGroup: "SELECT app_id FROM groups WHERE id = $1"
        case .deleteGroup: "DELETE FROM groups WHERE id = $1"
        case .insertRevision:
            """
            INSERT INTO group_revisions (group_id, revision, guid, name, icon, description, type, metadata, tags, owner,
                                         created_at, updated_at, frozen, join_requests)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
            """
        case .supersedeRevision:
            "UPDATE group_revisions SET superseded_at = $3 WHERE group_id = $1 AND revision = $2"
        case .supersededRevisions:
            """
            SELECT group_id, revision FROM group_revisions
            WHERE superseded_at IS NOT NULL AND superseded_at < $1 ORDER BY superseded_at LIMIT $2
            """
        case .firstRetainedRevision: "SELECT revision FROM actions WHERE group_id = $1 ORDER BY seq LIMIT 1"
        case .deleteRevision: "DELETE FROM group_revisions WHERE group_id = $1 AND revision = $2"
        case .deleteTags: "DELETE FROM group_tags WHERE group_id = $1"
        case .insertTags:
            """
            INSERT INTO group_tags (group_id, tag) SELECT $1, tag FROM unnest($2::text[]) AS tag
            ON CONFLICT DO NOTHING
            """
        case .groupsPage: "SELECT \(Self.groupColumns), m.scope, m.joined_at \(Self.groupsFrom) \(Self.groupsOrder)"
        case .groupsPageJoined:
            "SELECT \(Self.groupColumns), m.scope, m.joined_at \(Self.groupsJoinedFrom) \(Self.groupsOrder)"

        case .membership:
            """
            SELECT m.scope, m.joined_at, m.muted_until, m.mute_reason FROM members m
            WHERE m.group_id = $1 AND m.uid = $2 AND \(Self.readFromTable("m"))
            """
        // A new member or banned user has no invite to the group and no join request in it: they
        // go in the same statement (one statement instead of three: PostgreSQL's cost per
        // statement is most of a write's).
        case .insertMember:
            """
            WITH \(Self.dropInviteAndRequest)
            INSERT INTO members (group_id, uid, user_id, scope, joined_at) VALUES ($1, $2, $3, $4, $5)
            """
        case .deleteMember: "DELETE FROM members WHERE group_id = $1 AND uid = $2"
        case .setScope: "UPDATE members SET scope = $3 WHERE group_id = $1 AND uid = $2"
        case .setMute: "UPDATE members SET muted_until = $3, mute_reason = $4 WHERE group_id = $1 AND uid = $2"
        case .membersPage:
            // The page first, then its users: joining every member's user before the LIMIT (what
            // PostgreSQL plans for a group of a hundred) took about 1.4 times as long.
            """
            SELECT \(Self.memberColumns)
            FROM (SELECT m.* FROM members m \(Self.membersWhere) \(Self.membersOrder)) m JOIN users u ON u.id = m.user_id
            ORDER BY m.joined_at, m.uid
            """
        case .groupsOfUser:
            """
            SELECT g.guid FROM members m JOIN groups g ON g.id = m.group_id
            WHERE m.user_id = \(Self.userID()) ORDER BY g.guid
            """
        case .expiredMutes:
            // As expiredBans (see PostgresSession+Members).
            Self.lockedExpiries(
                of: "members m JOIN groups g ON g.id = m.group_id JOIN apps a ON a.id = g.app_id", alias: "m",
                guid: "g.guid", expiry: "m.muted_until")
        case .postingStandings:
            // CheckPost, every check of a call in one statement: $1 app, $2 guids, $3 uids (in
            // the checks' order). Per check: the group by its unique key and the membership by
            // its primary key (`Statement.probe`), for a non-member only the ban by its primary
            // key, and the user's ban from the app by its primary key (NULL: none).
            """
            SELECT c.i, g.type, g.frozen, m.scope, m.muted_until,
                   CASE WHEN g.id IS NOT NULL AND m.uid IS NULL
                        THEN (SELECT b.expires_at FROM bans b WHERE b.group_id = g.id AND b.uid = c.uid) END,
                   x.expires_at, x.shadow
            FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS c (guid, uid, i)
            LEFT JOIN \(Self.probe("groups", as: "g", where: "g.app_id = $1 AND g.guid = c.guid COLLATE \"C\"")) ON true
            LEFT JOIN \(Self.probe("members", as: "m", where: "m.group_id = g.id AND m.uid = c.uid COLLATE \"C\"", fromTable: true)) ON true
            LEFT JOIN \(Self.probe("app_bans", as: "x", where: "x.app_id = $1 AND x.uid = c.uid COLLATE \"C\"")) ON true
            ORDER BY c.i
            """

        case .ban:
            "SELECT \(Self.banColumns) FROM bans b JOIN users u ON u.id = b.user_id WHERE b.group_id = $1 AND b.uid = $2"
        case .insertBan:
            """
            WITH \(Self.dropInviteAndRequest)
            INSERT INTO bans (group_id, uid, user_id, scope_before, joined_at, banned_at, banned_by, reason, expires_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
            """
        case .deleteBan: "DELETE FROM bans WHERE group_id = $1 AND uid = $2"
        case .groupsBanningUser:
            """
            SELECT g.guid FROM bans b JOIN groups g ON g.id = b.group_id
            WHERE b.user_id = \(Self.userID(live: true)) ORDER BY g.guid
            """
        case .bansPage: "SELECT \(Self.banColumns) \(Self.bansFrom) \(Self.bansOrder)"
        case .expiredBans:
            // The sweeper then handles only bans it can change now (see PostgresSession+Bans).
            Self.lockedExpiries(
                of: "bans b JOIN groups g ON g.id = b.group_id JOIN apps a ON a.id = g.app_id", alias: "b",
                guid: "g.guid", expiry: "b.expires_at")

        case .appBan:
            "SELECT \(Self.appBanColumns) FROM app_bans x JOIN users u ON u.id = x.user_id WHERE x.app_id = $1 AND x.uid = $2"
        // A reader without the read cache: one user's ban, for the per-call check.
        case .appBanStanding: "SELECT expires_at, shadow FROM app_bans WHERE app_id = $1 AND uid = $2"
        // Every ban of an app, as the per-call check keeps them in memory (`AppBanSets`).
        case .appBansOfApp: "SELECT uid, expires_at, shadow FROM app_bans WHERE app_id = $1"
        // Each change of an app's bans bumps the app's app_bans_version in the same statement
        // (under the app's lock, which the write holds): the version `AppBanSets` keeps them for.
        case .insertAppBan:
            """
            WITH bumped AS (UPDATE apps SET app_bans_version = app_bans_version + 1 WHERE id = $1)
            INSERT INTO app_bans (app_id, uid, user_id, banned_at, banned_by, reason, expires_at, shadow)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            """
        case .deleteAppBan:
            """
            WITH bumped AS (UPDATE apps SET app_bans_version = app_bans_version + 1 WHERE id = $1)
            DELETE FROM app_bans WHERE app_id = $1 AND uid = $2
            """
        case .appBansPage: "SELECT \(Self.appBanColumns) \(Self.appBansFrom) \(Self.appBansOrder)"
        case .expiredAppBans:
            // As expiredBans; the guid column is empty (a ban from the app is in no group).
            Self.lockedExpiries(
                of: "app_bans x JOIN apps a ON a.id = x.app_id", alias: "x", guid: "''", expiry: "x.expires_at")

        case .invite:
            "SELECT \(Self.inviteColumns) FROM invites i JOIN users u ON u.id = i.user_id WHERE i.group_id = $1 AND i.uid = $2"
        case .upsertInvite:
            """
            INSERT INTO invites (group_id, uid, user_id, scope, invited_by, invited_at, expires_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            ON CONFLICT (group_id, uid) DO UPDATE SET scope = excluded.scope, invited_by = excluded.invited_by,
                invited_at = excluded.invited_at, expires_at = excluded.expires_at
            """
        case .deleteInvite: "DELETE FROM invites WHERE group_id = $1 AND uid = $2"
        case .invitesPage:
            // $2/$3 keyset (invited_at descending, uid), $4 now, $5 limit.
            """
            SELECT \(Self.inviteColumns) FROM invites i JOIN users u ON u.id = i.user_id
            WHERE i.group_id = $1 AND (i.invited_at < $2 OR (i.invited_at = $2 AND i.uid > $3)) AND i.expires_at > $4
            ORDER BY i.invited_at DESC, i.uid LIMIT $5
            """
        case .invitesOfUser:
            // $1 app, $2 uid, $3/$4 keyset (invited_at descending, guid), $5 now, $6 limit.
            """
            SELECT \(Self.groupColumns), \(Self.inviteColumns)
            FROM invites i JOIN users u ON u.id = i.user_id JOIN groups g ON g.id = i.group_id
            WHERE i.user_id = \(Self.userID())
              AND (i.invited_at < $3 OR (i.invited_at = $3 AND g.guid > $4)) AND i.expires_at > $5
            ORDER BY i.invited_at DESC, g.guid LIMIT $6
            """
        case .purgeInvites:
            // Rows another writer holds (refreshing an invite) are left for the next run.
            """
            DELETE FROM invites WHERE ctid = ANY (ARRAY (
                SELECT ctid FROM invites WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED))
            """
        case .deleteInvitesOfUser: "DELETE FROM invites WHERE user_id = $1"
        case .joinRequest:
            """
            SELECT r.uid, u.name, u.avatar, r.message, r.requested_at FROM join_requests r JOIN users u ON u.id = r.user_id
            WHERE r.group_id = $1 AND r.uid = $2
            """
        case .insertJoinRequest:
            "INSERT INTO join_requests (group_id, uid, user_id, message, requested_at) VALUES ($1, $2, $3, $4, $5)"
        case .deleteJoinRequest: "DELETE FROM join_requests WHERE group_id = $1 AND uid = $2"
        case .joinRequestsPage:
            // $2/$3 keyset (requested_at, uid), $4 limit.
            """
            SELECT r.uid, u.name, u.avatar, r.message, r.requested_at FROM join_requests r JOIN users u ON u.id = r.user_id
            WHERE r.group_id = $1 AND (r.requested_at, r.uid) > ($2, $3)
            ORDER BY r.requested_at, r.uid LIMIT $4
            """
        case .joinRequestCount: "SELECT count(*) FROM join_requests WHERE group_id = $1"
        case .deleteJoinRequestsOfUser: "DELETE FROM join_requests WHERE user_id = $1"
        case .report: "SELECT \(Self.reportColumns) FROM reports r WHERE r.group_id = $1 AND r.id = $2"
        case .openReport:
            "SELECT \(Self.reportColumns) FROM reports r WHERE r.group_id = $1 AND r.reporter = $2 AND r.target = $3 AND r.resolution = 0"
        case .reportsPage:
            // $2 open or resolved, $3 after id, $4 limit.
            """
            SELECT \(Self.reportColumns) FROM reports r
            WHERE r.group_id = $1 AND (r.resolution = 0) = $2::boolean AND r.id > $3 ORDER BY r.id LIMIT $4
            """
        case .reportCounts:
            "SELECT target, count(*) FROM reports WHERE group_id = $1 AND (resolution = 0) = $2::boolean GROUP BY target"
        case .reportsFiled: "SELECT count(*) FROM reports WHERE app_id = $1 AND reporter = $2 AND created_at >= $3"
        case .insertReport:
            """
            INSERT INTO reports (app_id, group_id, reporter, target, category, text, created_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id
            """
        case .resolveReport:
            "UPDATE reports SET resolution = $3, note = $4, resolved_at = $5, resolved_by = $6 WHERE group_id = $1 AND id = $2"

        case .contentRulesPage:
            // $3 after id, $4 limit.
            """
            SELECT \(Self.contentRuleColumns) FROM content_rules
            WHERE app_id = $1 AND guid = $2 AND id > $3 ORDER BY id LIMIT $4
            """
        case .contentRuleCount: "SELECT count(*) FROM content_rules WHERE app_id = $1 AND guid = $2"
        case .contentRuleByID:
            "SELECT \(Self.contentRuleColumns) FROM content_rules WHERE id = $3 AND app_id = $1 AND guid = $2"
        case .contentRuleByPattern:
            """
            SELECT \(Self.contentRuleColumns) FROM content_rules
            WHERE app_id = $1 AND guid = $2 AND kind = $3 AND pattern = $4
            """
        case .contentRuleSetVersions: "SELECT app_id, guid, version FROM content_rule_sets"
        case .insertContentRule:
            """
            INSERT INTO content_rules (app_id, guid, kind, pattern, action, description, created_at, created_by)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id
            """
        case .deleteContentRule: "DELETE FROM content_rules WHERE id = $2 AND app_id = $1"
        case .setContentRuleSetVersion:
            """
            INSERT INTO content_rule_sets (app_id, guid, version) VALUES ($1, $2, $3)
            ON CONFLICT (app_id, guid) DO UPDATE SET version = excluded.version
            """
        case .deleteContentRulesOfSet: "DELETE FROM content_rules WHERE app_id = $1 AND guid = $2"
        case .deleteContentRuleSet: "DELETE FROM content_rule_sets WHERE app_id = $1 AND guid = $2"

        case .webhooksOfApp:
            """
            SELECT \(Self.webhookColumns) FROM webhooks w JOIN apps a ON a.id = w.app_id
            WHERE w.app_id = $1 ORDER BY w.created_at, w.id
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
            VALUES ($1, $2, $3, $4::integer[], $5::text[], $6, $7::boolean, $8, $9, $10, $11, $12, $13, $14, $15, NULL, 0)
            """
        case .updateWebhook:
            // The same parameters as insertWebhook; the lease stays.
            """
            UPDATE webhooks SET url = $3, kinds = $4::integer[], guids = $5::text[], description = $6,
                enabled = $7::boolean, created_at = $8, secret = $9, generation = $10, last_delivered_seq = $11,
                consecutive_failures = $12, last_error = $13, next_attempt_at = $14, failing_since = $15
            WHERE id = $2 AND app_id = $1
            """
        case .deleteWebhook: "DELETE FROM webhooks WHERE id = $2 AND app_id = $1"
        case .webhookExists: "SELECT 1 FROM webhooks WHERE id = $1"
        // A webhook's row for a transaction that holds locks already: it must not wait (see
        // `PostgresSession`), so a row another writer holds is skipped.
        case .lockWebhookSkipping: "SELECT 1 FROM webhooks WHERE id = $1 FOR NO KEY UPDATE SKIP LOCKED"
        case .claimWebhookLease:
            // $1 id, $2 owner, $3 now, $4 expires at.
            """
            UPDATE webhooks SET lease_owner = $2, lease_expires_at = $4
            WHERE id = $1 AND (lease_owner IS NULL OR lease_owner = $2 OR lease_expires_at <= $3) RETURNING 1
            """
        case .leasedWebhooks: "SELECT count(*) FROM webhooks WHERE lease_owner = $1"
        case .lockLeasedWebhooksSkipping:
            "SELECT 1 FROM webhooks WHERE lease_owner = $1 FOR NO KEY UPDATE SKIP LOCKED"
        case .releaseWebhookLeases:
            "UPDATE webhooks SET lease_owner = NULL, lease_expires_at = 0 WHERE lease_owner = $1"
        case .recordWebhookDelivery:
            // $1 id, $2 owner, $3 generation, $4 enabled, $5–$9 the status.
            """
            UPDATE webhooks SET enabled = $4::boolean, last_delivered_seq = $5, consecutive_failures = $6,
                last_error = $7, next_attempt_at = $8, failing_since = $9
            WHERE id = $1 AND lease_owner = $2 AND generation = $3 RETURNING 1
            """

        case .insertActions:
            // One array per column, an element per action: a batch's actions in one statement.
            """
            INSERT INTO actions (app_id, seq, group_id, revision, kind, by_uid, on_uid, members_count, version, old_scope,
                                 new_scope, reason, expires_at, timestamp, idempotency_key, request_id, report_id,
                                 shadow, rules_added, rules_removed)
            SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::integer[], $6::text[],
                                 $7::text[], $8::bigint[], $9::bigint[], $10::integer[], $11::integer[], $12::text[],
                                 $13::bigint[], $14::bigint[], $15::text[], $16::text[], $17::bigint[],
                                 $18::boolean[], $19::integer[], $20::integer[])
            """
        case .actionsOfApp:
            // $1 app, $2/$3 the seq range (after, through), $4 kind mask, $5 actor or NULL,
            // $6 target or NULL, $7 limit.
            """
            SELECT \(Self.actionColumns), \(Self.actionResolvedColumns)
            FROM (SELECT a.* FROM actions a
                  WHERE a.app_id = $1 AND a.seq > $2 AND a.seq <= $3 AND ((1::bigint << a.kind) & $4::bigint) <> 0
                    AND ($5::text IS NULL OR a.by_uid = $5::text) AND ($6::text IS NULL OR a.on_uid = $6::text)
                  ORDER BY a.seq LIMIT $7) a
            \(Self.actionResolvedFrom)
            ORDER BY a.seq
            """
        case .actionsOfGroup:
            // $8 group; the rest as actionsOfApp.
            """
            SELECT \(Self.actionColumns), \(Self.actionResolvedColumns)
            FROM (SELECT a.* FROM actions a
                  WHERE a.group_id = $8 AND a.app_id = $1 AND a.seq > $2 AND a.seq <= $3
                    AND ((1::bigint << a.kind) & $4::bigint) <> 0
                    AND ($5::text IS NULL OR a.by_uid = $5::text) AND ($6::text IS NULL OR a.on_uid = $6::text)
                  ORDER BY a.seq LIMIT $7) a
            \(Self.actionResolvedFrom)
            ORDER BY a.seq
            """
        case .hasActionsOn: "SELECT 1 FROM actions WHERE group_id = $1 AND on_uid = $2 LIMIT 1"
        case .pruneScan: "SELECT seq, timestamp FROM actions WHERE app_id = $1 AND seq > $2 ORDER BY seq LIMIT $3"
        case .pruneDelete: "DELETE FROM actions WHERE app_id = $1 AND seq > $2 AND seq <= $3"

        case .idempotentReply:
            "SELECT reply FROM idempotency WHERE app_id = $1 AND actor = $2 AND key = $3 AND created_at >= $4"
        case .prefetchReplies:
            // The stored replies of app $1's (actor, key) pairs $2, $3 (`PostgresSession.prefetch`),
            // one primary-key probe each (`Statement.probe`): as a join, the generic plan made
            // while the table was small scanned it whole (6.4 ms a batch once it held 45 000
            // replies).
            """
            SELECT c.actor, c.key, i.created_at, i.reply
            FROM unnest($2::text[], $3::text[]) AS c (actor, key)
            CROSS JOIN \(Self.probe("idempotency", as: "i", where: "i.app_id = $1 AND i.actor = c.actor COLLATE \"C\" AND i.key = c.key COLLATE \"C\""))
            """
        case .saveReply:
            """
            INSERT INTO idempotency (app_id, actor, key, created_at, reply) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (app_id, actor, key) DO UPDATE SET created_at = excluded.created_at, reply = excluded.reply
            """
        case .purgeReplies:
            // Rows another writer holds (replacing a reply) are left for the next run.
            """
            DELETE FROM idempotency WHERE ctid = ANY (ARRAY (
                SELECT ctid FROM idempotency WHERE created_at < $1 ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED))
            """

        case .passwordFailures:
            // How many after the cutoff, and the first of them in recorded order.
            """
            SELECT count(*), (array_agg(u.t ORDER BY u.i))[1]
            FROM password_attempts p CROSS JOIN LATERAL unnest(p.failures) WITH ORDINALITY AS u (t, i)
            WHERE p.app = $1 AND p.guid = $2 AND p.uid = $3 AND u.t > $4
            """
        case .passwordFailuresOfPairs:
            // The rows of app $1's (group, user) pairs $2, $3 (`PostgresSession.prefetch`), one
            // primary-key probe each, as `.prefetchReplies` and for its reason: the table grows
            // fastest under a guessing attack, when a generic plan made earlier would scan it.
            """
            SELECT c.guid, c.uid, p.failures
            FROM unnest($2::text[], $3::text[]) AS c (guid, uid)
            CROSS JOIN \(Self.probe("password_attempts", as: "p", where: "p.app = $1 AND p.guid = c.guid COLLATE \"C\" AND p.uid = c.uid COLLATE \"C\""))
            """
        case .recordPasswordFailure:
            // One statement, atomic against every instance's: the row's lock orders them.
            """
            INSERT INTO password_attempts AS p (app, guid, uid, failures, last_at)
            VALUES ($1, $2, $3, ARRAY[$4::bigint], $4::bigint)
            ON CONFLICT (app, guid, uid) DO UPDATE SET
                failures = array_append(
                    ARRAY (SELECT u.t FROM unnest(p.failures) WITH ORDINALITY AS u (t, i) WHERE u.t > $5 ORDER BY u.i),
                    $4::bigint),
                last_at = greatest(p.last_at, $4::bigint)
            """
        case .clearPasswordFailures: "DELETE FROM password_attempts WHERE app = $1 AND guid = $2 AND uid = $3"
        case .purgePasswordFailures: "DELETE FROM password_attempts WHERE last_at <= $1"
        case .leaseRateTokens:
            // $1 app, $2 tokens wanted, $3 rate per second, $4 burst. The bucket refills by the
            // time since its last lease (PostgreSQL's clock, never backwards) up to the burst;
            // a new bucket starts full. Grants whole tokens, as many as are there, up to $2.
            """
            INSERT INTO rate_buckets AS b (app, tokens, updated_at, granted)
            VALUES ($1, $4::float8 - least($2::float8, floor($4::float8)), now(), least($2::float8, floor($4::float8)))
            ON CONFLICT (app) DO UPDATE SET
                tokens = \(Self.rateAvailable) - least($2::float8, floor(\(Self.rateAvailable))),
                granted = least($2::float8, floor(\(Self.rateAvailable))),
                updated_at = greatest(b.updated_at, now())
            RETURNING granted::bigint
            """
        }
    }
}
