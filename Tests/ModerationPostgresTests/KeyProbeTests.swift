import StoreTestSupport
import TestSupport
import Testing

@testable import ModerationPostgres

/// The statements that look up memberships and bans by (group, user), one or many pairs at once,
/// probe the primary key, in an app of small groups with one large one. PostgreSQL costs a lookup
/// in a group it does not know when it plans by the average group, and chose two ways that read
/// the large group's whole index range per pair: written as joins, it probed `members` by the
/// group alone and filtered on the uid; as subqueries, it walked `members_by_joined` (an
/// index-only scan: that index covers every column) for the uid. In a group of 100 000 members
/// that was 0.25–0.6 s a read-ahead, 0.3–1.3 s a CheckPost of 100 pairs and 4–47 ms a lookup of
/// one membership (`Statement.probe`, `Statement.readFromTable`). The same for groups and users
/// looked up by app among many small apps: planned once for all (a generic plan), a lookup in the
/// large app was costed as one in the average app, and joined directly the read-ahead hashed every
/// group of the large app for each batch. And with a guid every app has, PostgreSQL took the app
/// and the guid for independent, expected hundreds of groups, and scanned `members` whole for the
/// membership of a group read with it. The same misestimate for a uid every app has, on the
/// statements that read a user's groups, bans or invites: they hashed the whole table
/// (`Statement.userID`); and a page of actions, whose users a plan for its values hashed.
@Suite("PostgreSQL store: lookups by key probe the primary key")
struct KeyProbeTests {
    /// A statement that looks up memberships by key, with its parameters' types and, given the
    /// app's id and the large group's, its arguments: for the pair lookups, 40 pairs in the
    /// large group (members, banned users and users of neither); for the others, one member.
    struct KeyLookup: Sendable {
        let statement: Statement
        let parameterTypes: String
        let arguments: @Sendable (_ appID: String, _ groupID: String) -> String
        /// The indexes that serve its lookups of `members` and `bans`.
        let indexes: String
        /// For the statements of many pairs: the indexes that serve their lookups of `groups` and
        /// `users`.
        var keyIndexes: String? = nil
    }

    static let pairs = (
        uids: (0..<40).map { "'u\(($0 * 523) % 22000)'" }.joined(separator: ","),
        guids: Array(repeating: "'g0'", count: 40).joined(separator: ",")
    )

    static let statements = [
        KeyLookup(
            statement: .prefetch, parameterTypes: "bigint, text[], text[], text",
            arguments: { app, _ in "\(app), ARRAY[\(pairs.guids)], ARRAY[\(pairs.uids)], 'app'" },
            indexes: "bans_pkey members_pkey", keyIndexes: "groups_app_id_guid_key users_app_id_uid_key users_pkey"),
        KeyLookup(
            statement: .postingStandings, parameterTypes: "bigint, text[], text[]",
            arguments: { app, _ in "\(app), ARRAY[\(pairs.guids)], ARRAY[\(pairs.uids)]" },
            indexes: "bans_pkey members_pkey", keyIndexes: "groups_app_id_guid_key"),
        KeyLookup(
            statement: .membership, parameterTypes: "bigint, text", arguments: { _, group in "\(group), 'u777'" },
            indexes: "members_pkey"),
        KeyLookup(
            statement: .standing, parameterTypes: "bigint, text, bigint",
            arguments: { app, group in "\(app), 'u777', \(group)" }, indexes: "bans_pkey members_pkey"),
        KeyLookup(
            statement: .groupWithMembership, parameterTypes: "bigint, text, text",
            arguments: { app, _ in "\(app), 'g0', 'u777'" }, indexes: "members_pkey"),
    ]

    /// PostgreSQL's two ways of planning a prepared statement: for its arguments, or once for all.
    static let planModes = ["force_custom_plan", "force_generic_plan"]

    /// A schema of one app with 2 000 groups of 3 members, one ban and one invite each, one group
    /// (`g0`) of 20 000 members and 2 000 bans (users "u0"–"u21999", ids 1–22 000) and 5 000
    /// actions; beside it 30 000 apps of 2 groups and 2 users each, with the app's guids and
    /// uids. Returns the schema (for the caller to drop), the app's id and its large group's.
    /// Seeding is most of each test's time.
    static func seededSchema() throws -> (schema: TestSchema, appID: String, groupID: String) {
        let schema = try TestSchema()
        do {
            return try seed(schema)
        } catch {
            schema.drop()
            throw error
        }
    }

    private static func seed(_ schema: TestSchema) throws -> (schema: TestSchema, appID: String, groupID: String) {
        let store = try PostgresStore(options: PostgresStoreOptions(url: schema.url, schema: schema.name))
        store.close()
        _ = try schema.value(
            """
            INSERT INTO apps (name) VALUES ('app');
            INSERT INTO groups (app_id, guid, name, name_folded, icon, description, type, metadata, tags, owner,
                                members_count, version, revision, created_at, updated_at)
            SELECT a.id, 'g' || i, 'n', 'n', '', '', 0, '{}', '{}', 'u0', 0, 1, 1, 0, 0
            FROM apps a, generate_series(0, 2000) i;
            INSERT INTO users (app_id, uid, name, name_folded, avatar, metadata, created_at)
            SELECT a.id, 'u' || i, 'n', 'n', '', '{}', 0 FROM apps a, generate_series(0, 21999) i;
            INSERT INTO members (group_id, uid, user_id, scope, joined_at)
            SELECT g.id, u.uid, u.id, 0, 0
            FROM groups g CROSS JOIN generate_series(0, 2) j JOIN users u ON u.uid = 'u' || ((g.id * 3 + j) % 20000)
            WHERE g.guid <> 'g0';
            INSERT INTO bans (group_id, uid, user_id, joined_at, banned_at, banned_by, reason, expires_at)
            SELECT g.id, u.uid, u.id, 0, 0, 'u1', '', 0
            FROM groups g JOIN users u ON u.uid = 'u' || (20000 + g.id % 2000) WHERE g.guid <> 'g0';
            INSERT INTO members (group_id, uid, user_id, scope, joined_at)
            SELECT g.id, u.uid, u.id, 0, 0 FROM groups g JOIN users u ON u.id <= 20000 WHERE g.guid = 'g0';
            INSERT INTO bans (group_id, uid, user_id, joined_at, banned_at, banned_by, reason, expires_at)
            SELECT g.id, u.uid, u.id, 0, 0, 'u1', '', 0 FROM groups g JOIN users u ON u.id > 20000
            WHERE g.guid = 'g0';
            -- "u0" (a member of g0 only) is banned from 5 groups and invited to 10.
            INSERT INTO bans (group_id, uid, user_id, joined_at, banned_at, banned_by, reason, expires_at)
            SELECT g.id, 'u0', 1, 0, 0, 'u1', '', 0 FROM groups g WHERE g.guid <> 'g0' AND g.id % 400 = 0;
            INSERT INTO invites (group_id, uid, user_id, scope, invited_by, invited_at, expires_at)
            SELECT g.id, u.uid, u.id, 0, 'u1', g.id, 9000000000000000
            FROM groups g JOIN users u ON u.uid = 'u' || ((g.id * 7) % 200) WHERE g.guid <> 'g0';
            -- 5 000 actions, by and on the app's users, in 2 000 groups.
            INSERT INTO actions (app_id, seq, group_id, revision, kind, by_uid, on_uid, members_count, version, reason,
                                 expires_at, timestamp, idempotency_key, request_id)
            SELECT a.id, i, 1 + i % 2000, 1, 3, 'u' || (i * 13 % 20000), 'u' || (i * 7 % 20000), 0, 1, '', 0, 0, '', ''
            FROM apps a, generate_series(1, 5000) i;
            -- Last, so that the statements above see the app's rows only. Their guids and uids are
            -- the app's (every app has a "g0"): PostgreSQL takes (app, guid) for independent.
            INSERT INTO apps (name) SELECT 'small' || i FROM generate_series(1, 30000) i;
            INSERT INTO groups (app_id, guid, name, name_folded, icon, description, type, metadata, tags, owner,
                                members_count, version, revision, created_at, updated_at)
            SELECT a.id, 'g' || i, 'n', 'n', '', '', 0, '{}', '{}', 'u0', 0, 1, 1, 0, 0
            FROM apps a, generate_series(0, 1) i WHERE a.name <> 'app';
            INSERT INTO users (app_id, uid, name, name_folded, avatar, metadata, created_at)
            SELECT a.id, 'u' || i, 'n', 'n', '', '{}', 0 FROM apps a, generate_series(0, 1) i WHERE a.name <> 'app';
            """)
        // Vacuumed as well as analyzed: with every page all-visible, an index-only scan of
        // `members_by_joined` costs no heap fetch, which is what made PostgreSQL prefer it.
        let tables = ["apps", "groups", "users", "members", "bans", "invites", "actions"].map {
            "\"\(schema.name)\".\($0)"
        }
        _ = try PostgresCluster.value("VACUUM (ANALYZE) \(tables.joined(separator: ", "))", url: schema.url)
        let appID = try #require(try schema.value("SELECT id FROM apps WHERE name = 'app'"))
        let groupID = try #require(
            try schema.value("SELECT id FROM groups WHERE app_id = \(appID) AND guid = 'g0'"))
        return (schema, appID, groupID)
    }

    /// One schema for every statement and plan mode.
    @Test("a membership or ban looked up by its key is one probe of the primary key")
    func probesByWholeKey() throws {
        let (schema, appID, groupID) = try Self.seededSchema()
        defer { schema.drop() }
        for lookup in Self.statements {
            for planMode in Self.planModes {
                func lookups(of relations: String) throws -> String? {
                    try Self.readers(
                        of: relations, in: schema, planMode: planMode, sql: lookup.statement.sql,
                        parameterTypes: lookup.parameterTypes, arguments: lookup.arguments(appID, groupID))
                }
                let rows = try lookups(of: "'members', 'bans'")
                #expect(rows == "\(lookup.indexes), 1", "\(lookup.statement), \(planMode)")
                if let keyIndexes = lookup.keyIndexes {
                    let keyRows = try lookups(of: "'groups', 'users'")
                    #expect(keyRows == "\(keyIndexes), 1", "\(lookup.statement), \(planMode): groups and users")
                }
            }
        }
    }

    /// A statement that reads rows of `table` by a user's key: one user's rows (their
    /// memberships, bans or invites; `rows` nil, for as many as the user has), or one user per
    /// row of a page (`rows` 1); and the index that must serve it.
    struct UserRead: Sendable {
        let name: String
        let sql: String
        let parameterTypes: String
        let arguments: @Sendable (_ appID: String) -> String
        let table: String
        let index: String
        var rows: Int? = nil
    }

    static let userReads = [
        UserRead(
            name: "groupsPageJoined", sql: Statement.groupsPageJoined.sql,
            parameterTypes: "bigint, text, boolean, bigint, text, bigint, text[], bigint, bigint",
            arguments: { app in "\(app), 'u0', false, -1, '', 255, NULL, 0, 31" }, table: "members",
            index: "members_by_user"),
        UserRead(
            name: "SearchSQL.groupsJoined", sql: SearchSQL.groupsJoined,
            parameterTypes: "bigint, text, boolean, bigint, text, bigint, text[], bigint, bigint, text",
            arguments: { app in "\(app), 'u0', false, -1, '', 255, NULL, 0, 31, '%g%'" }, table: "members",
            index: "members_by_user"),
        UserRead(
            name: "groupsOfUser", sql: Statement.groupsOfUser.sql, parameterTypes: "bigint, text",
            arguments: { app in "\(app), 'u0'" }, table: "members", index: "members_by_user"),
        UserRead(
            name: "groupsBanningUser", sql: Statement.groupsBanningUser.sql, parameterTypes: "bigint, text",
            arguments: { app in "\(app), 'u0'" }, table: "bans", index: "bans_by_user"),
        UserRead(
            name: "invitesOfUser", sql: Statement.invitesOfUser.sql,
            parameterTypes: "bigint, text, bigint, text, bigint, bigint",
            arguments: { app in "\(app), 'u0', 9223372036854775807, '', 0, 31" }, table: "invites",
            index: "invites_by_user"),
        UserRead(
            name: "actionsOfApp", sql: Statement.actionsOfApp.sql,
            parameterTypes: "bigint, bigint, bigint, bigint, text, text, bigint",
            arguments: { app in "\(app), 0, 100000, 255, NULL, NULL, 500" }, table: "users",
            index: "users_app_id_uid_key", rows: 1),
        UserRead(
            name: "actionsOfGroup", sql: Statement.actionsOfGroup.sql,
            parameterTypes: "bigint, bigint, bigint, bigint, text, text, bigint, bigint",
            arguments: { app in "\(app), 0, 100000, 255, NULL, NULL, 500, 7" }, table: "users",
            index: "users_app_id_uid_key", rows: 1),
    ]

    /// "u0" is a user of every app. Its memberships, bans and invites are read by the user's index
    /// whether the statement is planned for its values (as every search is) or once for all; and
    /// a page of actions looks its actors and targets up one by one, not by hashing every user of
    /// the app.
    @Test("a user's groups, bans and invites, and an action's users, are read through the users' keys")
    func readsByUsersKeys() throws {
        let (schema, appID, _) = try Self.seededSchema()
        defer { schema.drop() }
        let own = try #require(
            try schema.value(
                """
                SELECT (SELECT count(*) FROM members WHERE user_id = u.id) || ' '
                    || (SELECT count(*) FROM bans WHERE user_id = u.id) || ' '
                    || (SELECT count(*) FROM invites WHERE user_id = u.id)
                FROM users u WHERE app_id = \(appID) AND uid = 'u0'
                """))
        let counts = Dictionary(uniqueKeysWithValues: zip(["members", "bans", "invites"], own.split(separator: " ")))
        for read in Self.userReads {
            for planMode in Self.planModes {
                let readers = try Self.readers(
                    of: "'\(read.table)'", in: schema, planMode: planMode, sql: read.sql,
                    parameterTypes: read.parameterTypes, arguments: read.arguments(appID))
                let rows = read.rows.map(String.init) ?? counts[read.table].map(String.init) ?? "?"
                #expect(readers == "\(read.index), \(rows)", "\(read.name), \(planMode)")
            }
        }
    }

    /// The indexes (or else the node types) that read `relations` when `sql`, prepared with
    /// `parameterTypes` under `planMode`, runs with `arguments`, and the most rows one of them
    /// read: "members_pkey, 1". A bitmap scan counts as a read by the (first) index it scans.
    static func readers(
        of relations: String, in schema: TestSchema, planMode: String, sql: String, parameterTypes: String,
        arguments: String
    ) throws -> String? {
        try schema.value(
            """
            SET plan_cache_mode = \(planMode);
            PREPARE lookup (\(parameterTypes)) AS \(sql);
            CREATE FUNCTION pg_temp.plan(query text) RETURNS jsonb LANGUAGE plpgsql AS $$
            DECLARE plan json;
            BEGIN
                EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' || query INTO plan;
                RETURN plan::jsonb;
            END $$;
            SELECT string_agg(
                       DISTINCT coalesce(
                           node ->> 'Index Name', jsonb_path_query_first(node, 'lax $.Plans.**."Index Name"') #>> '{}',
                           node ->> 'Node Type'),
                       ' ')
                || ', ' || max((node ->> 'Actual Rows')::numeric)
            FROM jsonb_path_query(pg_temp.plan($q$EXECUTE lookup (\(arguments))$q$), 'lax $.**') AS node
            WHERE jsonb_typeof(node) = 'object' AND node ->> 'Relation Name' IN (\(relations));
            """)
    }
}
