internal import Glibc
import Synchronization
public import TestSupport

/// The schemas of closed test stores, emptied and kept for the next store instead of dropped.
///
/// A new schema costs PostgreSQL its migrations (about 20 tables and 40 indexes, each a catalog
/// entry and a file) and as much again to drop: with hundreds of stores a test process spent most
/// of PostgreSQL's time there. Emptying one takes a delete per table. A schema is kept only once
/// it is empty, its identities restart at 1 and no other connection holds a lock in it, so a
/// store opened on it sees what a store on a new schema would (its migrations find it up to date).
/// In a database the tests did not start (`MODERATION_TEST_POSTGRES_URL`) the kept schemas are
/// dropped when the test process exits.
public enum PostgresSchemaPool {
    /// Emptied schemas, by database URL.
    private static let idle = Mutex<[String: [String]]>([:])

    /// The prefix of the schemas the pool hands out (`uniqueSchema`'s, then a number).
    static let prefix = "pool"

    /// A schema for a new store in the database at `url`: an emptied one, else a new name (the
    /// store's migrations create it).
    public static func take(url: String) -> String {
        if url == PostgresCluster.configuredURL { _ = dropAtExit }
        return idle.withLock { $0[url]?.popLast() } ?? PostgresCluster.uniqueSchema(prefix)
    }

    /// Registers, once, the exit handler that drops the kept schemas of the configured database.
    private static let dropAtExit: Void = {
        atexit {
            for (url, schemas) in PostgresSchemaPool.idle.withLock({ $0 }) where url == PostgresCluster.configuredURL {
                for schema in schemas { PostgresCluster.dropSchema(schema, url: url) }
            }
        }
    }()

    /// Empties `schema`, whose store is closed, and keeps it for the next store; drops it when it
    /// cannot be emptied (a role that may not turn off the foreign keys' triggers, a connection
    /// still open on it). Each schema `take` gave is handed back once.
    public static func giveBack(_ schema: String, url: String) {
        do {
            let connection = try PostgresTestConnection(url: url)
            try connection.execute(emptying(schema))
            idle.withLock { pools in
                precondition(pools[url, default: []].contains(schema) == false, "schema \(schema) handed back twice")
                pools[url, default: []].append(schema)
            }
        } catch {
            PostgresCluster.dropSchema(schema, url: url)
        }
    }

    /// One statement that empties every table of `schema` but its migration record, and restarts
    /// its identities. `session_replication_role = replica` turns off the foreign keys' triggers,
    /// so the tables empty in any order. It fails, and the schema is dropped, when any other
    /// connection has the schema's tables open (a store connection not yet gone).
    static func emptying(_ schema: String) -> String {
        let literal = "'" + schema.replacing("'", with: "''") + "'"
        return """
            DO $$
            DECLARE table_name text;
            BEGIN
                IF EXISTS (
                    SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
                    JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE n.nspname = \(literal) AND l.pid <> pg_backend_pid()
                ) THEN
                    RAISE EXCEPTION 'schema % is still in use', \(literal);
                END IF;
                PERFORM set_config('session_replication_role', 'replica', true);
                FOR table_name IN
                    SELECT tablename FROM pg_tables
                    WHERE schemaname = \(literal) AND tablename <> 'schema_migrations'
                LOOP
                    EXECUTE format('DELETE FROM %I.%I', \(literal), table_name);
                END LOOP;
                PERFORM setval(format('%I.%I', schemaname, sequencename), 1, false)
                FROM pg_sequences WHERE schemaname = \(literal);
            END $$
            """
    }
}
