import Moderation
import RPCCore
import TestSupport
import Testing

@testable import ServerApp

/// `--store` and the PostgreSQL settings: read like every other setting, checked at start, and
/// the URL's password never in a message.
@Suite("Server settings: the store")
struct StoreSettingsTests {
    private func parse(_ arguments: [String], _ environment: [String: String] = [:]) throws(ConfigurationError)
        -> ServerSettings
    {
        guard case .run(let settings) = try ServerSettingsParser.parse(arguments: arguments, environment: environment)
        else {
            throw ConfigurationError("not a run command")
        }
        return settings
    }

    private func error(_ arguments: [String], _ environment: [String: String] = [:]) -> String? {
        do {
            _ = try parse(arguments, environment)
            return nil
        } catch {
            return error.message
        }
    }

    @Test("SQLite by default; postgres from a flag, a variable or the config file")
    func chosen() throws {
        #expect(try parse([]).store == .sqlite)
        let url = "postgresql://app:secret@db:5432/moderation"
        let fromFlags = try parse(
            [
                "--store", "postgres", "--postgres-url", url, "--postgres-schema", "moderation", "--postgres-readers",
                "4",
                "--postgres-writers", "3", "--postgres-poll-ms", "500", "--postgres-read-cache", "0",
            ])
        #expect(fromFlags.store == .postgres && fromFlags.postgresURL == url)
        #expect(fromFlags.postgresSchema == "moderation" && fromFlags.postgresReaders == 4)
        #expect(fromFlags.postgresWriters == 3 && fromFlags.postgresPollMs == 500 && fromFlags.postgresReadCache == 0)
        let fromEnvironment = try parse([], ["MODERATION_STORE": "postgres", "MODERATION_POSTGRES_URL": url])
        #expect(fromEnvironment.store == .postgres && fromEnvironment.postgresURL == url)
        #expect(fromEnvironment.postgresSchema == "public" && fromEnvironment.postgresReadCache == 200_000)
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let file = try directory.write(
            Array("store = postgres\npostgres-url = \"\(url)\"\npostgres-schema = tenant_a\n".utf8), to: "conf")
        let fromFile = try parse(["--config", file])
        #expect(fromFile.store == .postgres && fromFile.postgresURL == url && fromFile.postgresSchema == "tenant_a")
    }

    @Test("refused: postgres without a URL, a URL that is not one (without repeating it), a bad schema name")
    func refused() {
        #expect(error(["--store", "postgres"])?.contains("--store postgres needs --postgres-url") == true)
        #expect(error(["--store", "mysql"])?.contains("'mysql' is not one of sqlite, postgres") == true)
        let refused = error(["--postgres-url", "db:5432 with s3cret"])
        #expect(refused?.hasPrefix("--postgres-url: expected postgresql://") == true, "\(refused ?? "nil")")
        #expect(refused?.contains("s3cret") == false)
        #expect(error(["--postgres-schema", "Public"])?.hasPrefix("--postgres-schema: expected a lowercase") == true)
        #expect(error(["--postgres-readers", "0"]) != nil)
        #expect(error(["--postgres-poll-ms", "5"]) != nil)
        #expect(error(["--postgres-read-cache", "-1"]) != nil)
    }

    @Test("a PostgreSQL store that cannot be reached: the URL without its password, the store's error as the cause")
    func unreachable() throws {
        let port = try UnusedPort.find()
        var settings = ServerSettings()
        settings.port = 0
        settings.threads = 1
        settings.store = .postgres
        settings.postgresURL = "postgresql://app:s3cret@127.0.0.1:\(port)/moderation"
        let directory = TemporaryDirectory(prefix: "startup")
        defer { directory.remove() }
        settings.dataDirectory = directory.path
        do throws(ServerStartupError) {
            let server = try ModerationServer(settings: settings, authenticator: TestKeys(), logger: .disabled)
            server.shutdown(gracePeriodMs: 0)
            Issue.record("the server started without its database")
        } catch {
            #expect(
                error.message.hasPrefix("cannot open the PostgreSQL store at postgresql://app:***@127.0.0.1:\(port)"))
            #expect(!error.message.contains("s3cret"), "\(error.message)")
            #expect((error.cause as? ModerationError)?.code == .storeUnavailable)
        }
    }

    @Test("backup copies the SQLite store only")
    func backupRefusesPostgres() {
        #expect(
            ServerMain.run(arguments: ["backup", "--store", "postgres", "--output", "/tmp/x"], environment: [:]) == 2)
        #expect(
            ServerMain.run(arguments: ["backup", "--output", "/tmp/x"], environment: ["MODERATION_STORE": "postgres"])
                == 2)
    }
}
