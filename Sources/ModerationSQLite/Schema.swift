internal import Moderation

/// The versioned schema: an ordered list of migrations, applied at open in one transaction each,
/// with SQLite's `user_version` recording how many have run.
///
/// Never edit a released migration; append a new one. Every table is STRICT; every query has an
/// index (listed next to the table it reads).
enum Schema {
    static let migrations: [String] = [version1, version2, version3, version4, version5, version6]

    /// Brings the database up to the latest version; a no-op when it is already there.
    static func migrate(_ connection: SQLiteConnection) throws(ModerationError) {
        let current = Int(try connection.integer("PRAGMA user_version"))
        guard current <= migrations.count else {
            throw .storage("the database has schema version \(current), newer than this build's \(migrations.count)")
        }
        for version in current..<migrations.count {
            try connection.exec("BEGIN IMMEDIATE")
            do {
                try connection.exec(migrations[version])
                try connection.exec("PRAGMA user_version = \(version + 1)")
                try connection.exec("COMMIT")
            } catch {
                try? connection.exec("ROLLBACK")
                throw error
            }
        }
    }

    private static let version1 = """
        -- Tenants. head_seq: the app's last action seq (allocated in the writing transaction, so
        -- never a gap); pruned_through: every seq up to it was removed by retention.
        CREATE TABLE apps (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            head_seq INTEGER NOT NULL DEFAULT 0,
            pruned_through INTEGER NOT NULL DEFAULT 0
        ) STRICT;

        -- Users are never deleted. name_folded: TextFolding.fold(name), for search.
        CREATE TABLE users (
            id INTEGER PRIMARY KEY,
            app_id INTEGER NOT NULL REFERENCES apps (id),
            uid TEXT NOT NULL,
            name TEXT NOT NULL,
            name_folded TEXT NOT NULL,
            avatar TEXT NOT NULL,
            metadata BLOB NOT NULL,
            created_at INTEGER NOT NULL,
            UNIQUE (app_id, uid)
        ) STRICT;

        -- AUTOINCREMENT: a deleted group's id is never reused, so (id, revision) names one
        -- descriptive state forever (the action log refers to it).
        CREATE TABLE groups (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            app_id INTEGER NOT NULL REFERENCES apps (id),
            guid TEXT NOT NULL,
            name TEXT NOT NULL,
            name_folded TEXT NOT NULL,
            icon TEXT NOT NULL,
            description TEXT NOT NULL,
            type INTEGER NOT NULL,
            password_hash TEXT,
            metadata BLOB NOT NULL,
            tags BLOB NOT NULL,
            owner TEXT NOT NULL,
            members_count INTEGER NOT NULL,
            version INTEGER NOT NULL,
            revision INTEGER NOT NULL,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            UNIQUE (app_id, guid)
        ) STRICT;
        CREATE INDEX groups_by_created ON groups (app_id, created_at, guid);

        CREATE TABLE group_tags (
            group_id INTEGER NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
            tag TEXT NOT NULL,
            PRIMARY KEY (group_id, tag)
        ) STRICT, WITHOUT ROWID;

        -- Every descriptive state a group had, for the action log's group snapshots; kept after
        -- the group is deleted until no retained action refers to it.
        CREATE TABLE group_revisions (
            group_id INTEGER NOT NULL,
            revision INTEGER NOT NULL,
            guid TEXT NOT NULL,
            name TEXT NOT NULL,
            icon TEXT NOT NULL,
            description TEXT NOT NULL,
            type INTEGER NOT NULL,
            metadata BLOB NOT NULL,
            tags BLOB NOT NULL,
            owner TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            superseded_at INTEGER,
            PRIMARY KEY (group_id, revision)
        ) STRICT;
        CREATE INDEX group_revisions_by_superseded ON group_revisions (superseded_at) WHERE superseded_at IS NOT NULL;

        -- Scopes: 1 admin, 2 moderator, 3 participant (the proto numbers).
        CREATE TABLE members (
            group_id INTEGER NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
            uid TEXT NOT NULL,
            user_id INTEGER NOT NULL,
            scope INTEGER NOT NULL,
            joined_at INTEGER NOT NULL,
            PRIMARY KEY (group_id, uid)
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX members_by_joined ON members (group_id, joined_at, uid, user_id, scope);
        CREATE INDEX members_by_user ON members (user_id, group_id);

        -- Bans in force (and expired ones the sweeper has not recorded yet), clustered in the
        -- order of the banned list. scope_before NULL: a pre-emptive ban. expires_at 0: permanent.
        CREATE TABLE bans (
            group_id INTEGER NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
            banned_at INTEGER NOT NULL,
            uid TEXT NOT NULL,
            user_id INTEGER NOT NULL,
            scope_before INTEGER,
            joined_at INTEGER NOT NULL,
            banned_by TEXT NOT NULL,
            reason TEXT NOT NULL,
            expires_at INTEGER NOT NULL,
            PRIMARY KEY (group_id, banned_at DESC, uid)
        ) STRICT, WITHOUT ROWID;
        CREATE UNIQUE INDEX bans_by_uid ON bans (group_id, uid);
        CREATE INDEX bans_by_expiry ON bans (expires_at) WHERE expires_at > 0;

        -- The action log, one row per action. id packs the app and its seq, (app_id << 43) | seq,
        -- so an app's log is one contiguous rowid range in seq order and an append is a rowid
        -- table's cheap append. A group snapshot is (group_id, revision) plus the counters here.
        -- Kinds: the proto ActionType numbers. by_uid "@app" for the app.
        CREATE TABLE actions (
            id INTEGER PRIMARY KEY,
            group_id INTEGER NOT NULL,
            revision INTEGER NOT NULL,
            kind INTEGER NOT NULL,
            by_uid TEXT NOT NULL,
            on_uid TEXT,
            members_count INTEGER NOT NULL,
            version INTEGER NOT NULL,
            old_scope INTEGER,
            new_scope INTEGER,
            reason TEXT NOT NULL,
            expires_at INTEGER NOT NULL,
            timestamp INTEGER NOT NULL,
            idempotency_key TEXT NOT NULL,
            request_id TEXT NOT NULL
        ) STRICT;
        -- (group_id, rowid): a group's actions in seq order. Deliberately no index by target:
        -- actions target random users, so such an index takes a random page write per action
        -- and cut write throughput by more than half (measured); target filters scan the group's
        -- log in bounded windows instead (see ActionLogQuery.throughSeq).
        CREATE INDEX actions_by_group ON actions (group_id);

        -- Substring search: the distinct trigrams (three Unicode scalars packed 21 bits each) of
        -- each user's uid and folded name (kind 1) and each group's guid and folded name (kind 2),
        -- per app, with how many entities carry each trigram. A search looks up its two rarest
        -- trigrams only, then checks the candidates with instr().
        CREATE TABLE search_grams (
            kind INTEGER NOT NULL,
            app_id INTEGER NOT NULL,
            gram INTEGER NOT NULL,
            id INTEGER NOT NULL,
            PRIMARY KEY (kind, app_id, gram, id)
        ) STRICT, WITHOUT ROWID;
        CREATE TABLE search_gram_counts (
            kind INTEGER NOT NULL,
            app_id INTEGER NOT NULL,
            gram INTEGER NOT NULL,
            count INTEGER NOT NULL,
            PRIMARY KEY (kind, app_id, gram)
        ) STRICT, WITHOUT ROWID;

        -- Replies of idempotent calls. actor '' for the app.
        CREATE TABLE idempotency (
            app_id INTEGER NOT NULL,
            actor TEXT NOT NULL,
            key TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            reply BLOB NOT NULL,
            PRIMARY KEY (app_id, actor, key)
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX idempotency_by_age ON idempotency (created_at);
        """

    /// Version 2: mutes, freezes and deleted users.
    private static let version2 = """
        -- A deleted user keeps their row as a tombstone (profile erased, deleted_at set), so the
        -- uid is never used again; lookups by uid skip it.
        ALTER TABLE users ADD COLUMN deleted_at INTEGER NOT NULL DEFAULT 0;

        -- A frozen group's reason is for its admins and moderators; snapshots keep only the flag.
        ALTER TABLE groups ADD COLUMN frozen INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE groups ADD COLUMN frozen_reason TEXT NOT NULL DEFAULT '';
        ALTER TABLE group_revisions ADD COLUMN frozen INTEGER NOT NULL DEFAULT 0;

        -- A mute lives on its membership row, so it ends with the membership. muted_until as on
        -- the wire: 0 not muted, -1 until unmuted, else the expiry (Unix ms).
        ALTER TABLE members ADD COLUMN muted_until INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE members ADD COLUMN mute_reason TEXT NOT NULL DEFAULT '';
        -- The member list's index stays covering with the mute.
        DROP INDEX members_by_joined;
        CREATE INDEX members_by_joined ON members (group_id, joined_at, uid, user_id, scope, muted_until, mute_reason);
        CREATE INDEX members_by_mute_expiry ON members (muted_until) WHERE muted_until > 0;

        -- A deleted user's bans, found by user.
        CREATE INDEX bans_by_user ON bans (user_id);
        """

    /// Version 3: invites, join requests and reports.
    private static let version3 = """
        -- Invites, live until expires_at (Unix ms) exactly; rows past it are "not found" to every
        -- call and purged by maintenance. A member or a banned user has none (inserting either
        -- deletes it), nor a deleted user; a group's go with it.
        CREATE TABLE invites (
            group_id INTEGER NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
            uid TEXT NOT NULL,
            user_id INTEGER NOT NULL,
            scope INTEGER NOT NULL,
            invited_by TEXT NOT NULL,
            invited_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            PRIMARY KEY (group_id, uid)
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX invites_by_group ON invites (group_id, invited_at DESC, uid);
        CREATE INDEX invites_by_user ON invites (user_id, invited_at DESC);
        CREATE INDEX invites_by_expiry ON invites (expires_at);

        -- Whether a group takes join requests ("knock"); part of its descriptive state.
        ALTER TABLE groups ADD COLUMN join_requests INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE group_revisions ADD COLUMN join_requests INTEGER NOT NULL DEFAULT 0;

        -- Pending join requests, oldest first. A member or a banned user has none (inserting
        -- either deletes it), nor a deleted user; a group's go with it.
        CREATE TABLE join_requests (
            group_id INTEGER NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
            uid TEXT NOT NULL,
            user_id INTEGER NOT NULL,
            message TEXT NOT NULL,
            requested_at INTEGER NOT NULL,
            PRIMARY KEY (group_id, uid)
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX join_requests_by_time ON join_requests (group_id, requested_at, uid);
        CREATE INDEX join_requests_by_user ON join_requests (user_id);

        -- Reports, private to the group's admins and moderators, the app and the reporter.
        -- AUTOINCREMENT: an id is never reused (actions refer to it). Categories 1 spam,
        -- 2 harassment, 3 hate, 4 violence, 5 other; resolution 0 open, 1 dismissed, 2 actioned
        -- (the proto numbers). They stay when their reporter or target is deleted.
        CREATE TABLE reports (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            app_id INTEGER NOT NULL,
            group_id INTEGER NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
            reporter TEXT NOT NULL,
            target TEXT NOT NULL,
            category INTEGER NOT NULL,
            text TEXT NOT NULL,
            resolution INTEGER NOT NULL DEFAULT 0,
            note TEXT NOT NULL DEFAULT '',
            created_at INTEGER NOT NULL,
            resolved_at INTEGER NOT NULL DEFAULT 0,
            resolved_by TEXT NOT NULL DEFAULT ''
        ) STRICT;
        CREATE INDEX reports_by_group ON reports (group_id, resolution, id);
        CREATE INDEX reports_open_by_pair ON reports (group_id, reporter, target) WHERE resolution = 0;
        CREATE INDEX reports_by_reporter ON reports (app_id, reporter, created_at);

        -- The report a reported / reportResolved action is about (0 for other actions).
        ALTER TABLE actions ADD COLUMN report_id INTEGER NOT NULL DEFAULT 0;
        """

    /// Version 4: bans from the whole app.
    private static let version4 = """
        -- Bans from the whole app (and expired ones the sweeper has not recorded yet), clustered
        -- in the order of ListAppBans. expires_at 0: until unbanned; shadow 1: a shadow ban. The
        -- per-call check reads them from memory (AppBanMemory), loaded at open. A deleted user's
        -- ban goes with them.
        CREATE TABLE app_bans (
            app_id INTEGER NOT NULL REFERENCES apps (id),
            banned_at INTEGER NOT NULL,
            uid TEXT NOT NULL,
            user_id INTEGER NOT NULL,
            banned_by TEXT NOT NULL,
            reason TEXT NOT NULL,
            expires_at INTEGER NOT NULL,
            shadow INTEGER NOT NULL,
            PRIMARY KEY (app_id, banned_at DESC, uid)
        ) STRICT, WITHOUT ROWID;
        CREATE UNIQUE INDEX app_bans_by_uid ON app_bans (app_id, uid);
        CREATE INDEX app_bans_by_expiry ON app_bans (expires_at) WHERE expires_at > 0;

        -- Whether the ban of an appBanned / appUnbanned action is a shadow ban. Those actions
        -- belong to no group: group_id and revision 0.
        ALTER TABLE actions ADD COLUMN shadow INTEGER NOT NULL DEFAULT 0;
        """

    /// Version 5: content rules.
    private static let version5 = """
        -- Content rules of the app's set (guid '') and of groups' sets, in the order added (id).
        -- kind 1 word, 2 regex, 3 domain; action 1 block, 2 flag. A group's rules go with it.
        CREATE TABLE content_rules (
            id INTEGER PRIMARY KEY,
            app_id INTEGER NOT NULL REFERENCES apps (id),
            guid TEXT NOT NULL,
            kind INTEGER NOT NULL,
            pattern TEXT NOT NULL,
            action INTEGER NOT NULL,
            description TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            created_by TEXT NOT NULL
        ) STRICT;
        CREATE INDEX content_rules_by_set ON content_rules (app_id, guid, id);
        CREATE UNIQUE INDEX content_rules_by_pattern ON content_rules (app_id, guid, kind, pattern);

        -- Each set's version: the seq of the contentRulesChanged action that last changed it. A
        -- server compares these with the sets it has compiled.
        CREATE TABLE content_rule_sets (
            app_id INTEGER NOT NULL REFERENCES apps (id),
            guid TEXT NOT NULL,
            version INTEGER NOT NULL,
            PRIMARY KEY (app_id, guid)
        ) STRICT, WITHOUT ROWID;

        -- How many rules a contentRulesChanged action added and removed (0 for other actions).
        ALTER TABLE actions ADD COLUMN rules_added INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE actions ADD COLUMN rules_removed INTEGER NOT NULL DEFAULT 0;
        """

    /// Version 6: webhooks.
    private static let version6 = """
        -- The app's webhooks, oldest first by (created_at, id). kinds: the ActionKind codes
        -- delivered, comma-separated ('' for every kind); guids: RecordCoding strings (none: every
        -- group and the app's own). The status columns are delivery's progress: the cursor
        -- (last_delivered_seq) and the current run of failures. generation counts the app's moves
        -- of the cursor; a delivery records its outcome only at the generation it read, and only
        -- while it holds the lease (lease_owner NULL: free; lease_expires_at 0 with it).
        CREATE TABLE webhooks (
            id TEXT PRIMARY KEY,
            app_id INTEGER NOT NULL REFERENCES apps (id),
            url TEXT NOT NULL,
            kinds TEXT NOT NULL,
            guids BLOB NOT NULL,
            description TEXT NOT NULL,
            enabled INTEGER NOT NULL,
            created_at INTEGER NOT NULL,
            secret TEXT NOT NULL,
            generation INTEGER NOT NULL,
            last_delivered_seq INTEGER NOT NULL,
            consecutive_failures INTEGER NOT NULL,
            last_error TEXT NOT NULL,
            next_attempt_at INTEGER NOT NULL,
            failing_since INTEGER NOT NULL,
            lease_owner TEXT,
            lease_expires_at INTEGER NOT NULL
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX webhooks_by_app ON webhooks (app_id, created_at, id);
        CREATE INDEX webhooks_enabled ON webhooks (app_id, created_at, id) WHERE enabled = 1;
        CREATE INDEX webhooks_by_lease_owner ON webhooks (lease_owner) WHERE lease_owner IS NOT NULL;
        """
}
