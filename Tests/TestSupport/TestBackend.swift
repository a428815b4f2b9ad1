/// The store a test's service runs on.
public enum TestBackend: Sendable, Equatable {
    /// The embedded SQLite store in a temporary directory.
    case sqlite
    /// The PostgreSQL store, in a schema of its own in the database at `url`.
    case postgres(url: String)

    /// What the service suites run on: PostgreSQL when `MODERATION_TEST_POSTGRES_URL` names a
    /// database (`tools/test`'s PostgreSQL stage), else SQLite.
    public static let current: TestBackend = PostgresCluster.configuredURL.map { .postgres(url: $0) } ?? .sqlite

    public var isPostgres: Bool {
        if case .postgres = self { return true }
        return false
    }

    /// For `.disabled(if:)` on tests of SQLite's own behaviour (WAL checkpoints, the database
    /// file, the page cache).
    public static var isPostgres: Bool { current.isPostgres }
}
