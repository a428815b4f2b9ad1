public import Moderation
public import ModerationPostgres
public import ModerationSQLite
import Synchronization
public import TestSupport

/// A `ModerationService` on a fresh store with a manual clock — what every domain test starts
/// from: SQLite in a temporary directory, or, while a test runs on PostgreSQL
/// (`TestBackend.current`, set by `.onEveryStore`), the PostgreSQL store in a schema of its own. Reopening keeps the
/// data (durability tests).
public final class ServiceHarness: @unchecked Sendable {
    // Invariant: `store` and `service` are replaced only by `reopen()`, which tests call from the
    // thread that owns the harness while no other thread uses it.
    public let directory: TemporaryDirectory
    public let clock: ManualWallClock
    public let backend: TestBackend
    /// The SQLite store's options (used only on `.sqlite`).
    public let storeOptions: SQLiteStoreOptions
    /// The PostgreSQL store's options, its schema included (nil on `.sqlite`).
    public let postgresOptions: PostgresStoreOptions?
    public let configuration: ModerationService.Configuration
    public private(set) var store: any ModerationStore
    public private(set) var service: ModerationService
    private let tornDown = Atomic<Bool>(false)

    /// - Parameters:
    ///   - durability, tweak: the SQLite store's settings (ignored on PostgreSQL).
    ///   - backend: the store; tests of one store's own behaviour name it.
    public init(
        clock: ManualWallClock = ManualWallClock(), durability: SQLiteStoreOptions.Durability = .normal,
        configuration: ModerationService.Configuration = ModerationService.Configuration(passwordHasher: .fastForTests),
        backend: TestBackend = .current, tweak: (inout SQLiteStoreOptions) -> Void = { _ in }
    ) throws {
        directory = TemporaryDirectory()
        self.clock = clock
        self.backend = backend
        var options = SQLiteStoreOptions(
            directory: directory.path + "/data", durability: durability, cacheSizeKiB: 4096, mmapSize: 0)
        tweak(&options)
        storeOptions = options
        self.configuration = configuration
        switch backend {
        case .sqlite:
            postgresOptions = nil
        case .postgres(let url):
            postgresOptions = PostgresStoreOptions(
                url: url, schema: PostgresSchemaPool.take(url: url), writers: 2, readers: 4)
        }
        store = try Self.open(storeOptions, postgresOptions)
        service = ModerationService(store: store, now: clock.function, configuration: configuration)
    }

    /// The SQLite store (tests of it make their harness with `backend: .sqlite`).
    public var sqliteStore: SQLiteStore {
        guard let store = store as? SQLiteStore else { preconditionFailure("the harness runs on \(backend)") }
        return store
    }

    /// A caller of `app` acting as `actor` (nil: the app itself).
    public func client(_ actor: String? = nil, app: String = "app") -> ModerationClient {
        ModerationClient(service: service, caller: Caller(app: app, actor: actor), store: store)
    }

    /// Closes the store and opens it again with a new service (from disk, or the same schema).
    public func reopen() throws {
        service.shutdown()
        store.close()
        store = try Self.open(storeOptions, postgresOptions)
        service = ModerationService(store: store, now: clock.function, configuration: configuration)
    }

    /// Closes everything and deletes the data: the directory, or the schema's rows (the emptied
    /// schema goes back to `PostgresSchemaPool`). Only the first call does anything.
    public func tearDown() {
        guard !tornDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
        service.shutdown()
        store.close()
        directory.remove()
        if let postgresOptions { PostgresSchemaPool.giveBack(postgresOptions.schema, url: postgresOptions.url) }
    }

    private static func open(_ sqlite: SQLiteStoreOptions, _ postgres: PostgresStoreOptions?) throws
        -> any ModerationStore
    {
        if let postgres { return try PostgresStore(options: postgres) }
        return try SQLiteStore(options: sqlite)
    }
}
