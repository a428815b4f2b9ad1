internal import Moderation

/// The versioned schema: an ordered list of migrations, applied at start, one transaction each,
/// recorded in `schema_migrations`; a database newer than the build is refused.
///
/// Instances that start together do not race: each migration runs under a transaction-scoped
/// advisory lock of the schema (`pg_advisory_xact_lock`), and re-reads the version once it holds
/// the lock, so the second instance finds the work done. Creating `pg_trgm` (once per database)
/// has a lock of its own. Never edit a released migration; append a new one.
enum Migrations {
    /// The migrations, given the schema `pg_trgm` lives in (its operator classes are named
    /// with it, so the store's `search_path` needs only the store's own schema).
    static func all(trigramSchema: String) -> [String] {
        [
            version1(trigram: PGConnection.quoteIdentifier(trigramSchema)), version2, version3, version4, version5,
            version6, version7, version8,
        ]
    }

    /// Advisory lock keys: (class, object) pairs of `pg_advisory_xact_lock(int, int)`.
    static let lockClass = "hashtext('moderation.schema')"

    /// Brings `schema` up to the latest version (creating it and `pg_trgm` when missing).
    static func migrate(_ connection: PGConnection, schema: String) throws(ModerationError) {
        // Another instance's migration may take its time: wait for its lock as long as it runs.
        try connection.exec("SET lock_timeout TO 0")
        let trigramSchema = try ensureTrigramExtension(connection)
        let literal = "'" + schema.replacing("'", with: "''") + "'"
        let migrations = all(trigramSchema: trigramSchema)
        var version = 0
        repeat {
            try inTransaction(connection) { () throws(ModerationError) in
                try connection.exec("SELECT pg_advisory_xact_lock(\(lockClass), hashtext(\(literal)))")
                // Checked first: CREATE SCHEMA needs a privilege on the database even when the
                // schema exists, and an operator may have created it for a user without one.
                let existing = try connection.exec("SELECT 1 FROM pg_namespace WHERE nspname = \(literal)")
                if existing?.rowCount == 0 {
                    try connection.exec("CREATE SCHEMA \(PGConnection.quoteIdentifier(schema))")
                }
                try connection.exec(
                    """
                    CREATE TABLE IF NOT EXISTS schema_migrations (
                        version integer PRIMARY KEY,
                        applied_at timestamptz NOT NULL DEFAULT now()
                    )
                    """)
                version = Int(
                    try connection.exec("SELECT coalesce(max(version), 0) FROM schema_migrations")!.int64(0, 0))
                guard version <= migrations.count else {
                    throw .storage(
                        "the database schema \(schema) has version \(version), newer than this build's \(migrations.count)"
                    )
                }
                guard version < migrations.count else { return }
                try connection.exec(migrations[version])
                try connection.exec("INSERT INTO schema_migrations (version) VALUES (\(version + 1))")
                version += 1
            }
        } while version < migrations.count
    }

    /// The schema `pg_trgm` is installed in, creating the extension (in `public`) when missing.
    private static func ensureTrigramExtension(_ connection: PGConnection) throws(ModerationError) -> String {
        let query = """
            SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
            WHERE e.extname = 'pg_trgm'
            """
        if let found = try connection.exec(query), found.rowCount > 0 { return found.string(0, 0) }
        try inTransaction(connection) { () throws(ModerationError) in
            try connection.exec("SELECT pg_advisory_xact_lock(\(lockClass), hashtext('pg_trgm'))")
            try connection.exec("CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public")
        }
        guard let found = try connection.exec(query), found.rowCount > 0 else {
            throw .storage("the pg_trgm extension could not be created")
        }
        return found.string(0, 0)
    }

    private static func inTransaction(_ connection: PGConnection, _ body: () throws(ModerationError) -> Void)
        throws(ModerationError)
    {
        try connection.exec("BEGIN")
        do {
            try body()
            try connection.exec("COMMIT")
        } catch {
            _ = try? connection.exec("ROLLBACK")
            throw error
        }
    }

    private static func version1(trigram: String) -> String {
        """
        -- Tenants. head_seq: the app's last action seq. The row is also the app's write lock:
        -- every write of the app locks it first (FOR NO KEY UPDATE) and holds it to COMMIT, so
        -- the app's seqs are allocated in commit order and never leave a gap.
        -- pruned_through: every seq up to it was removed by retention.
        CREATE TABLE apps (
            id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            name text COLLATE "C" NOT NULL UNIQUE,
            head_seq bigint NOT NULL DEFAULT 0,
            pruned_through bigint NOT NULL DEFAULT 0
        );

        -- Metadata is a text[] of keys and values in turn (keys sorted), tags a text[]: rows
        -- read plainly in psql.
        -- Users are never deleted. name_folded: TextFolding.fold(name), for search. Text that
        -- is compared or ordered is COLLATE "C": byte order, as in the SQLite store, so pages
        -- come in the same order on both.
        CREATE TABLE users (
            id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            app_id bigint NOT NULL REFERENCES apps (id),
            uid text COLLATE "C" NOT NULL,
            name text NOT NULL,
            name_folded text COLLATE "C" NOT NULL,
            avatar text NOT NULL,
            metadata text[] NOT NULL,
            created_at bigint NOT NULL,
            UNIQUE (app_id, uid)
        );
        -- Substring search (LIKE '%keyword%') on the uid and the folded name.
        CREATE INDEX users_uid_trigrams ON users USING gin (uid \(trigram).gin_trgm_ops);
        CREATE INDEX users_name_trigrams ON users USING gin (name_folded \(trigram).gin_trgm_ops);

        -- An identity never hands out an id twice, so (id, revision) names one descriptive state
        -- forever (the action log refers to it).
        CREATE TABLE groups (
            id bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
            app_id bigint NOT NULL REFERENCES apps (id),
            guid text COLLATE "C" NOT NULL,
            name text NOT NULL,
            name_folded text COLLATE "C" NOT NULL,
            icon text NOT NULL,
            description text NOT NULL,
            type integer NOT NULL,
            password_hash text,
            metadata text[] NOT NULL,
            tags text[] NOT NULL,
            owner text COLLATE "C" NOT NULL,
            members_count bigint NOT NULL,
            version bigint NOT NULL,
            revision bigint NOT NULL,
            created_at bigint NOT NULL,
            updated_at bigint NOT NULL,
            UNIQUE (app_id, guid)
        );
        CREATE INDEX groups_by_created ON groups (app_id, created_at, guid);
        CREATE INDEX groups_guid_trigrams ON groups USING gin (guid \(trigram).gin_trgm_ops);
        CREATE INDEX groups_name_trigrams ON groups USING gin (name_folded \(trigram).gin_trgm_ops);

        CREATE TABLE group_tags (
            group_id bigint NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
            tag text COLLATE "C" NOT NULL,
            PRIMARY KEY (group_id, tag)
        );

        -- Every descriptive state a group had, for the action log's group snapshots; kept after
        -- the group is deleted until no retained action refers to it.
        CREATE TABLE group_revisions (
            group_id bigint NOT NULL,
            revision bigint NOT NULL,
            guid text COLLATE "C" NOT NULL,
            name text NOT NULL,
            icon text NOT NULL,
            description text NOT NULL,
            type integer NOT NULL,
            metadata text[] NOT NULL,
            tags text[] NOT NULL,
            owner text COLLATE "C" NOT NULL,
            created_at bigint NOT NULL,
            updated_at bigint NOT NULL,
            superseded_at bigint,
            PRIMARY KEY (group_id, revision)
        );
        CREATE INDEX group_revisions_by_superseded ON group_revisions (superseded_at) WHERE superseded_at IS NOT NULL;

        -- Scopes: 1 admin, 2 moderator, 3 participant (the proto numbers).
        CREATE TABLE members (
            group_id bigint NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
            uid text COLLATE "C" NOT NULL,
            user_id bigint NOT NULL,
            scope integer NOT NULL,
            joined_at bigint NOT NULL,
            PRIMARY KEY (group_id, uid)
        );
        CREATE INDEX members_by_joined ON members (group_id, joined_at, uid) INCLUDE (user_id, scope);
        CREATE INDEX members_by_user ON members (user_id, group_id);

        -- Bans in force (and expired ones the sweeper has not recorded yet). scope_before NULL:
        -- a pre-emptive ban. expires_at 0: permanent.
        CREATE TABLE bans (
            group_id bigint NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
            uid text COLLATE "C" NOT NULL,
            user_id bigint NOT NULL,
            scope_before integer,
            joined_at bigint NOT NULL,
            banned_at bigint NOT NULL,
            banned_by text COLLATE "C" NOT NULL,
            reason text NOT NULL,
            expires_at bigint NOT NULL,
            PRIMARY KEY (group_id, uid)
        );
        CREATE INDEX bans_by_banned ON bans (group_id, banned_at DESC, uid);
        CREATE INDEX bans_by_expiry ON bans (expires_at) WHERE expires_at > 0;

        -- The action log, one row per action, an app's log in (app_id, seq) order: what any
        -- instance reads to follow the log by seq. A group snapshot is (group_id, revision) plus
        -- the counters here. Kinds: the proto ActionType numbers. by_uid "@app" for the app.
        CREATE TABLE actions (
            app_id bigint NOT NULL,
            seq bigint NOT NULL,
            group_id bigint NOT NULL,
            revision bigint NOT NULL,
            kind integer NOT NULL,
            by_uid text COLLATE "C" NOT NULL,
            on_uid text COLLATE "C",
            members_count bigint NOT NULL,
            version bigint NOT NULL,
            old_scope integer,
            new_scope integer,
            reason text NOT NULL,
            expires_at bigint NOT NULL,
            timestamp bigint NOT NULL,
            idempotency_key text NOT NULL,
            request_id text NOT NULL,
            PRIMARY KEY (app_id, seq)
        );
        -- A group's actions in seq order. No index by target (as in the SQLite store: target
        -- filters scan the group's log in bounded windows).
        CREATE INDEX actions_by_group ON actions (group_id, seq);

        -- Replies of idempotent calls. actor '' for the app.
        CREATE TABLE idempotency (
            app_id bigint NOT NULL,
            actor text COLLATE "C" NOT NULL,
            key text COLLATE "C" NOT NULL,
            created_at bigint NOT NULL,
            reply bytea NOT NULL,
            PRIMARY KEY (app_id, actor, key)
        );
        CREATE INDEX idempotency_by_age ON idempotency (created_at);
        """
    }

    /// The limits every instance shares: the wrong-password limit's ledger
    /// (`PostgresPasswordAttempts`) and the per-app rate limit's buckets (`leaseRateTokens`).
    private static let version2 = """
        -- Wrong group passwords per (app, group, user): the times (Unix ms) in the order they
        -- were recorded, those older than the window trimmed when one is added. last_at: the
        -- newest, for purging keys whose window has passed.
        CREATE TABLE password_attempts (
            app text COLLATE "C" NOT NULL,
            guid text COLLATE "C" NOT NULL,
            uid text COLLATE "C" NOT NULL,
            failures bigint[] NOT NULL,
            last_at bigint NOT NULL,
            PRIMARY KEY (app, guid, uid)
        );
        CREATE INDEX password_attempts_by_age ON password_attempts (last_at);

        -- The per-app rate limit's token bucket, shared by every instance: each leases chunks of
        -- it (tokens as of updated_at, PostgreSQL's clock; granted: the last lease's size).
        CREATE TABLE rate_buckets (
            app text COLLATE "C" PRIMARY KEY,
            tokens double precision NOT NULL,
            updated_at timestamptz NOT NULL,
            granted double precision NOT NULL
        );
        """

    /// Mutes, freezes and deleted users. Adding a column with a constant default
    /// rewrites nothing, so instances of the previous build keep running while one migrates.
    private static let version3 = """
        -- A deleted user keeps their row as a tombstone (profile erased, deleted_at set), so the
        -- uid is never used again; lookups by uid skip it.
        ALTER TABLE users ADD COLUMN deleted_at bigint NOT NULL DEFAULT 0;

        -- A frozen group's reason is for its admins and moderators; snapshots keep only the flag.
        ALTER TABLE groups ADD COLUMN frozen boolean NOT NULL DEFAULT false,
            ADD COLUMN frozen_reason text NOT NULL DEFAULT '';
        ALTER TABLE group_revisions ADD COLUMN frozen boolean NOT NULL DEFAULT false;

        -- A mute lives on its membership row, so it ends with the membership. muted_until as on
        -- the wire: 0 not muted, -1 until unmuted, else the expiry (Unix ms).
        ALTER TABLE members ADD COLUMN muted_until bigint NOT NULL DEFAULT 0,
            ADD COLUMN mute_reason text NOT NULL DEFAULT '';
        -- The member list's index stays covering with the mute.
        DROP INDEX members_by_joined;
        CREATE INDEX members_by_joined ON members (group_id, joined_at, uid) INCLUDE (user_id, scope, muted_until, mute_reason);
        CREATE INDEX members_by_mute_expiry ON members (muted_until) WHERE muted_until > 0;

        -- A deleted user's bans, found by user.
        CREATE INDEX bans_by_user ON bans (user_id);
        """

    /// Invites, join requests and reports. New tables, and columns with a constant
    /// default (which rewrite nothing), so instances of the previous build keep running while one
    /// migrates.
    private static let version4 = """
        -- Invites, live until expires_at (Unix ms) exactly; rows past it are "not found" to every
        -- call and purged by maintenance. A member or a banned user has none (inserting either
        -- deletes it), nor a deleted user; a group's go with it.
        CREATE TABLE invites (
            group_id bigint NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
            uid text COLLATE "C" NOT NULL,
            user_id bigint NOT NULL,
            scope integer NOT NULL,
            invited_by text COLLATE "C" NOT NULL,
            invited_at bigint NOT NULL,
            expires_at bigint NOT NULL,
            PRIMARY KEY (group_id, uid)
        );
        CREATE INDEX invites_by_group ON invites (group_id, invited_at DESC, uid);
        CREATE INDEX invites_by_user ON invites (user_id, invited_at DESC);
        CREATE INDEX invites_by_expiry ON invites (expires_at);

        -- Whether a group takes join requests ("knock"); part of its descriptive state.
        ALTER TABLE groups ADD COLUMN join_requests boolean NOT NULL DEFAULT false;
        ALTER TABLE group_revisions ADD COLUMN join_requests boolean NOT NULL DEFAULT false;

        -- Pending join requests, oldest first. A member or a banned user has none (inserting
        -- either deletes it), nor a deleted user; a group's go with it.
        CREATE TABLE join_requests (
            group_id bigint NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
            uid text COLLATE "C" NOT NULL,
            user_id bigint NOT NULL,
            message text NOT NULL,
            requested_at bigint NOT NULL,
            PRIMARY KEY (group_id, uid)
        );
        CREATE INDEX join_requests_by_time ON join_requests (group_id, requested_at, uid);
        CREATE INDEX join_requests_by_user ON join_requests (user_id);

        -- Reports, private to the group's admins and moderators, the app and the reporter.
        -- Categories 1 spam, 2 harassment, 3 hate, 4 violence, 5 other; resolution 0 open,
        -- 1 dismissed, 2 actioned (the proto numbers). They stay when their reporter or target
        -- is deleted.
        CREATE TABLE reports (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            app_id bigint NOT NULL,
            group_id bigint NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
            reporter text COLLATE "C" NOT NULL,
            target text COLLATE "C" NOT NULL,
            category integer NOT NULL,
            text text NOT NULL,
            resolution integer NOT NULL DEFAULT 0,
            note text NOT NULL DEFAULT '',
            created_at bigint NOT NULL,
            resolved_at bigint NOT NULL DEFAULT 0,
            resolved_by text COLLATE "C" NOT NULL DEFAULT ''
        );
        CREATE INDEX reports_by_group ON reports (group_id, resolution, id);
        CREATE INDEX reports_open_by_pair ON reports (group_id, reporter, target) WHERE resolution = 0;
        CREATE INDEX reports_by_reporter ON reports (app_id, reporter, created_at);

        -- The report a reported / reportResolved action is about (0 for other actions).
        ALTER TABLE actions ADD COLUMN report_id bigint NOT NULL DEFAULT 0;
        """

    /// The read cache (`ReadCache`): a counter of each app's committed changes.
    private static let version5 = """
        -- Bumped by every transaction that wrote the app's data (with head_seq, under the app's
        -- lock): a cached read is exact while the app's data_version is the one it was read at.
        ALTER TABLE apps ADD COLUMN data_version bigint NOT NULL DEFAULT 0;
        """

    /// Bans from the whole app. A new table and columns with a constant default (which rewrite
    /// nothing), so instances of the previous build keep running while one migrates.
    private static let version6 = """
        -- Bans from the whole app (and expired ones the sweeper has not recorded yet).
        -- expires_at 0: until unbanned. A deleted user's ban goes with them.
        CREATE TABLE app_bans (
            app_id bigint NOT NULL REFERENCES apps (id),
            uid text COLLATE "C" NOT NULL,
            user_id bigint NOT NULL,
            banned_at bigint NOT NULL,
            banned_by text COLLATE "C" NOT NULL,
            reason text NOT NULL,
            expires_at bigint NOT NULL,
            shadow boolean NOT NULL,
            PRIMARY KEY (app_id, uid)
        );
        CREATE INDEX app_bans_by_banned ON app_bans (app_id, banned_at DESC, uid);
        CREATE INDEX app_bans_by_expiry ON app_bans (expires_at) WHERE expires_at > 0;

        -- Bumped by every change to the app's bans (under the app's lock, with data_version at
        -- COMMIT): the per-call check keeps an app's bans in memory for the version they were
        -- read at (AppBanSets), and reads check it with data_version.
        ALTER TABLE apps ADD COLUMN app_bans_version bigint NOT NULL DEFAULT 0;

        -- Whether the ban of an appBanned / appUnbanned action is a shadow ban. Those actions
        -- belong to no group: group_id and revision 0.
        ALTER TABLE actions ADD COLUMN shadow boolean NOT NULL DEFAULT false;
        """

    /// Version 7: content rules.
    private static let version7 = """
        -- Content rules of the app's set (guid '') and of groups' sets, in the order added (id).
        -- kind 1 word, 2 regex, 3 domain; action 1 block, 2 flag. A group's rules go with it.
        CREATE TABLE content_rules (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            app_id bigint NOT NULL REFERENCES apps (id),
            guid text COLLATE "C" NOT NULL,
            kind integer NOT NULL,
            pattern text COLLATE "C" NOT NULL,
            action integer NOT NULL,
            description text NOT NULL,
            created_at bigint NOT NULL,
            created_by text COLLATE "C" NOT NULL
        );
        CREATE INDEX content_rules_by_set ON content_rules (app_id, guid, id);
        CREATE UNIQUE INDEX content_rules_by_pattern ON content_rules (app_id, guid, kind, pattern);

        -- Each set's version: the seq of the contentRulesChanged action that last changed it
        -- (written under the app's lock). Every server compares these with the sets it has
        -- compiled, which is how a change made on one server reaches the others.
        CREATE TABLE content_rule_sets (
            app_id bigint NOT NULL REFERENCES apps (id),
            guid text COLLATE "C" NOT NULL,
            version bigint NOT NULL,
            PRIMARY KEY (app_id, guid)
        );

        -- How many rules a contentRulesChanged action added and removed (0 for other actions).
        ALTER TABLE actions ADD COLUMN rules_added integer NOT NULL DEFAULT 0;
        ALTER TABLE actions ADD COLUMN rules_removed integer NOT NULL DEFAULT 0;
        """

    /// Version 8: webhooks. A new table, so instances of the previous build keep running while
    /// one migrates.
    private static let version8 = """
        -- The app's webhooks, oldest first by (created_at, id). kinds: the ActionKind codes
        -- delivered ('{}' for every kind); guids: the groups ('{}' for every group and the app's
        -- own). The status columns are delivery's progress: the cursor (last_delivered_seq) and
        -- the current run of failures. generation counts the app's moves of the cursor; a
        -- delivery records its outcome only at the generation it read, and only while it holds
        -- the lease (lease_owner NULL: free; lease_expires_at 0 with it). The app changes its
        -- webhooks under the app's lock; leases and progress are written without it, row by row.
        CREATE TABLE webhooks (
            id text COLLATE "C" PRIMARY KEY,
            app_id bigint NOT NULL REFERENCES apps (id),
            url text NOT NULL,
            kinds integer[] NOT NULL,
            guids text[] NOT NULL,
            description text NOT NULL,
            enabled boolean NOT NULL,
            created_at bigint NOT NULL,
            secret text NOT NULL,
            generation bigint NOT NULL,
            last_delivered_seq bigint NOT NULL,
            consecutive_failures integer NOT NULL,
            last_error text NOT NULL,
            next_attempt_at bigint NOT NULL,
            failing_since bigint NOT NULL,
            lease_owner text COLLATE "C",
            lease_expires_at bigint NOT NULL
        );
        CREATE INDEX webhooks_by_app ON webhooks (app_id, created_at, id);
        CREATE INDEX webhooks_enabled ON webhooks (app_id, created_at, id) WHERE enabled;
        CREATE INDEX webhooks_by_lease_owner ON webhooks (lease_owner) WHERE lease_owner IS NOT NULL;
        """
}
