import TestSupport
import Testing

@testable import ModerationPostgres

/// Every connection of the store is set up the same way before its first statement
/// (`PGConnection.init`): the store's schema, durable commits, UTC, the timeouts that bound
/// what another instance can make it wait for, and no JIT compilation.
@Suite("PostgreSQL: a connection's session settings")
struct SessionSettingsTests {
    @Test("schema, synchronous_commit, time zone, timeouts and jit as the store sets them")
    func settings() throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let options = PostgresStoreOptions(url: schema.url, schema: schema.name)
        for pipeline in [false, true] {
            let connection = try PGConnection(options.connectionOptions, pipeline: pipeline)
            let sql = """
                SELECT current_setting('search_path'), current_setting('synchronous_commit'),
                       current_setting('TimeZone'), current_setting('lock_timeout'),
                       current_setting('idle_in_transaction_session_timeout'), current_setting('jit')
                """
            let rows = pipeline ? try connection.query(sql: sql, []) : try #require(try connection.exec(sql))
            let values = (0..<6).map { rows.string(0, $0) }
            #expect(
                values == [schema.name, "on", "UTC", "10s", "1min", "off"], "pipeline \(pipeline): \(values)")
        }
    }
}
