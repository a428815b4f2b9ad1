public import Moderation
public import ModerationSQLite

/// A `ModerationService` on a `SQLiteStore` in a temporary directory, with a manual clock —
/// what every domain test starts from. Reopening keeps the directory (durability tests).
public final class ServiceHarness: @unchecked Sendable {
    // Invariant: `store` and `service` are replaced only by `reopen()`, which tests call from the
    // thread that owns the harness while no other thread uses it.
    public let directory: TemporaryDirectory
    public let clock: ManualClock
    public let storeOptions: SQLiteStoreOptions
    public let configuration: ModerationService.Configuration
    public private(set) var store: SQLiteStore
    public private(set) var service: ModerationService

    public init(
        clock: ManualClock = ManualClock(), durability: SQLiteStoreOptions.Durability = .normal,
        configuration: ModerationService.Configuration = ModerationService.Configuration(passwordHasher: .fastForTests),
        tweak: (inout SQLiteStoreOptions) -> Void = { _ in }
    ) throws {
        directory = TemporaryDirectory()
        self.clock = clock
        var options = SQLiteStoreOptions(
            directory: directory.path + "/data", durability: durability, cacheSizeKiB: 4096, mmapSize: 0)
        tweak(&options)
        storeOptions = options
        self.configuration = configuration
        store = try SQLiteStore(options: options)
        service = ModerationService(store: store, now: clock.function, configuration: configuration)
    }

    /// A caller of `app` acting as `actor` (nil: the app itself).
    public func client(_ actor: String? = nil, app: String = "app") -> ModerationClient {
        ModerationClient(service: service, caller: Caller(app: app, actor: actor), store: store)
    }

    /// Closes the store and opens it again from disk with a new service.
    public func reopen() throws {
        service.shutdown()
        store.close()
        store = try SQLiteStore(options: storeOptions)
        service = ModerationService(store: store, now: clock.function, configuration: configuration)
    }

    /// Closes everything and deletes the directory.
    public func tearDown() {
        service.shutdown()
        store.close()
        directory.remove()
    }
}
