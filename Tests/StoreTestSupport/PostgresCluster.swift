internal import Glibc
import RPCPosix
import Synchronization
public import TestSupport

/// A PostgreSQL cluster for tests: the database `MODERATION_TEST_POSTGRES_URL` names, or one
/// started here with `tools/pg-cluster` in a temporary directory.
///
/// The service suites (on every store, `.onEveryStore`) and the store's own tests
/// (ModerationPostgresTests) run on `shared`: the variable's database, else a private cluster
/// started for the test process on first use (and stopped when the process exits); tests that stop
/// and restart PostgreSQL start a cluster of their own. Every store gets a schema of its own (`uniqueSchema`), so tests
/// sharing a database stay independent and run in parallel.
public final class PostgresCluster: Sendable {
    /// The variable that names a database for the tests' PostgreSQL runs (unset: a private cluster).
    public static let environmentVariable = "MODERATION_TEST_POSTGRES_URL"

    public let url: String
    /// The directory of a cluster started here; nil for the one the variable names.
    public let directory: TemporaryDirectory?
    private let port: String?

    /// The URL the variable gives (nil or empty: `shared()` starts a cluster).
    public static let configuredURL: String? = {
        guard let value = getenv(environmentVariable), value.pointee != 0 else { return nil }
        return String(cString: value)
    }()

    /// The cluster of the tests that run on PostgreSQL: the configured one, else one started on
    /// first use (stopped when the process exits).
    /// - Throws: `TestFailure` when none can be started (PostgreSQL is not installed).
    public static func shared() throws -> PostgresCluster {
        try sharedCluster.get()
    }

    private static let sharedCluster: Result<PostgresCluster, TestFailure> = {
        if let configuredURL { return .success(PostgresCluster(url: configuredURL)) }
        do {
            let cluster = try PostgresCluster.start()
            startedForProcess.withLock { $0 = cluster }
            atexit { PostgresCluster.stopProcessCluster() }
            return .success(cluster)
        } catch let failure as TestFailure {
            return .failure(failure)
        } catch {
            return .failure(TestFailure("\(error)"))
        }
    }()

    private static let startedForProcess = Mutex<PostgresCluster?>(nil)

    private static func stopProcessCluster() {
        guard let cluster = startedForProcess.withLock({ $0 }) else { return }
        try? cluster.stop()
        cluster.directory?.remove()
    }

    private init(url: String) {
        self.url = url
        directory = nil
        port = nil
    }

    private init(url: String, directory: TemporaryDirectory) {
        self.url = url
        self.directory = directory
        port = url.split(separator: ":").last?.split(separator: "/").first.map(String.init)
    }

    /// Starts a new cluster in a temporary directory (initdb, a free port; fsync off, as tests
    /// need no durability against power loss, `synchronous_commit` on as in production).
    /// - Throws: `TestFailure` with the script's output when it fails.
    public static func start() throws -> PostgresCluster {
        let directory = TemporaryDirectory(prefix: "moderation-pg")
        let url = try run(["start", directory.path])
        return PostgresCluster(url: url, directory: directory)
    }

    /// Stops a cluster started here (fast shutdown: connections are cut).
    public func stop() throws {
        guard let directory else { throw TestFailure("the cluster at \(url) was not started by the tests") }
        _ = try Self.run(["stop", directory.path])
    }

    /// Starts a stopped cluster again, on the same port.
    public func restart() throws {
        guard let directory, let port else { throw TestFailure("the cluster at \(url) was not started by the tests") }
        _ = try Self.run(["start", directory.path, port])
    }

    /// Stops a cluster started here and removes its directory.
    public func tearDown() {
        try? stop()
        directory?.remove()
    }

    private static let counter = Atomic<Int>(0)

    /// A schema name no other store uses: `t_<pid>_<n>_<random>`.
    public static func uniqueSchema(_ prefix: String = "t") -> String {
        let number = counter.wrappingAdd(1, ordering: .relaxed).oldValue
        let random = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        return "\(prefix)_\(getpid())_\(number)_\(random)"
    }

    /// Runs SQL text (several statements allowed) on the database at `url`.
    /// - Throws: `TestFailure` with PostgreSQL's message.
    public static func execute(_ sql: String, url: String) throws {
        try PostgresTestConnection(url: url).execute(sql)
    }

    /// The first column of the first row of a query (nil when it returns no row).
    public static func value(_ sql: String, url: String) throws -> String? {
        try PostgresTestConnection(url: url).value(sql)
    }

    /// Drops a store's schema with everything in it (a test's teardown; errors are ignored).
    public static func dropSchema(_ schema: String, url: String) {
        try? execute("DROP SCHEMA IF EXISTS \"\(schema)\" CASCADE", url: url)
    }

    /// Runs `tools/pg-cluster` and returns its last line of output.
    private static func run(_ arguments: [String]) throws -> String {
        let script = BuiltProducts.packageRoot + "/tools/pg-cluster"
        var environment = ProcessEnvironment.current()
        environment["MODERATION_PG_FSYNC"] = "off"
        let outcome = try ChildProcess.run(
            executable: script, arguments: arguments, environment: environment, timeoutMs: 120_000)
        guard outcome.exitCode == 0 else {
            throw TestFailure("tools/pg-cluster \(arguments.joined(separator: " ")) failed: \(outcome)")
        }
        return outcome.lines.last ?? ""
    }
}
