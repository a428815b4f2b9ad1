internal import Glibc
public import Testing

/// The store a test's service runs on.
public enum TestBackend: Sendable, Equatable, CustomStringConvertible {
    /// The embedded SQLite store in a temporary directory.
    case sqlite
    /// The PostgreSQL store, in a schema of its own in the database at `url`.
    case postgres(url: String)

    /// The store of the running test: the one `.onEveryStore` runs it on at the moment, else
    /// SQLite. `ServiceHarness` and `ModerationTestServer` open their store on it.
    @TaskLocal public static var current: TestBackend = .sqlite

    public var isPostgres: Bool {
        if case .postgres = self { return true }
        return false
    }

    /// Whether the running test runs on PostgreSQL at the moment.
    public static var isPostgres: Bool { current.isPostgres }

    public var description: String { isPostgres ? "PostgreSQL" : "SQLite" }

    /// The variable that runs the service suites on one store only: `sqlite` or `postgres` (for
    /// a developer chasing a failure on one of them; unset, they run on both).
    public static let onlyVariable = "MODERATION_TEST_STORE"

    /// The stores `.onEveryStore` runs a test on: SQLite, then PostgreSQL (the database
    /// `MODERATION_TEST_POSTGRES_URL` names, else the test process's own cluster,
    /// `PostgresCluster.shared()`), or the one `MODERATION_TEST_STORE` names.
    /// - Throws: `TestFailure` when PostgreSQL is wanted and no cluster can be started.
    public static func every() throws -> [TestBackend] {
        let only = getenv(onlyVariable).map { String(cString: $0) } ?? ""
        switch only {
        case "sqlite": return [.sqlite]
        case "postgres": return [.postgres(url: try PostgresCluster.shared().url)]
        default: return [.sqlite, .postgres(url: try PostgresCluster.shared().url)]
        }
    }
}

/// Runs each test of a suite once on every store (`TestBackend.every()`), one after the other in
/// the same test case, with `TestBackend.current` set to the store: the service suites take the
/// store as a parameter this way, and a test written for one store runs on both. The test cases
/// run on `TestCaseThreads`, several at once however few the cores. A failure names
/// its store when it is a thrown error; an expectation that fails on one store only is told apart
/// by running with `MODERATION_TEST_STORE=sqlite` or `postgres`.
public struct EveryStoreTrait: SuiteTrait, TestTrait, TestScoping {
    /// PostgreSQL only, else every store (`TestBackend.every()`).
    let postgresOnly: Bool

    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        // Around each test case of a test function, never around a suite as a whole.
        test.isSuite || testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let stores = postgresOnly ? [.postgres(url: try PostgresCluster.shared().url)] : try TestBackend.every()
        try await withTaskExecutorPreference(TestCaseThreads.shared) {
            for backend in stores {
                do {
                    try await TestBackend.$current.withValue(backend) { try await function() }
                } catch {
                    Issue.record(FailureOnStore(backend: backend, error: error))
                }
            }
        }
    }
}

/// An error a test threw on one store, named with it.
struct FailureOnStore: Error, CustomStringConvertible {
    let backend: TestBackend
    let error: any Error

    var description: String { "on \(backend): \(error)" }
}

extension Trait where Self == EveryStoreTrait {
    /// Every test of the suite runs on SQLite, then on PostgreSQL (`EveryStoreTrait`).
    public static var onEveryStore: Self { EveryStoreTrait(postgresOnly: false) }

    /// Every test of the suite runs on PostgreSQL only (the test process's cluster): for what only
    /// that store does, such as several server instances on one database.
    public static var onPostgreSQL: Self { EveryStoreTrait(postgresOnly: true) }
}
