import Moderation
import ModerationPostgres
import StoreTestSupport
import Synchronization
import TestSupport

/// One server instance as the store sees it: a `PostgresStore` on a schema, a service over it,
/// and what its commit handler was given. Several on one schema stand for several servers on one
/// database.
final class Instance: Sendable {
    let store: PostgresStore
    let service: ModerationService
    /// Every action the commit handler (through the service's listeners) was given, in order.
    let delivered = Delivered()
    /// Every change of availability the store reported, in order.
    let availability = AvailabilityChanges()

    final class AvailabilityChanges: Sendable {
        private let changes = Mutex<[StoreAvailabilityChange]>([])
        func append(_ change: StoreAvailabilityChange) { changes.withLock { $0.append(change) } }
        var all: [StoreAvailabilityChange] { changes.withLock { $0 } }
    }

    final class Delivered: Sendable {
        private let actions = Mutex<[ActionRecord]>([])
        func append(_ batch: [ActionRecord]) { actions.withLock { $0 += batch } }
        var all: [ActionRecord] { actions.withLock { $0 } }
    }

    /// - Parameters:
    ///   - recordsActions: whether a listener following every app records what the commit
    ///     handler is given in `delivered` (false: the service has no listener of the test's).
    ///   - tweak: changes the store's options before it opens.
    init(
        url: String, schema: String, clock: ManualWallClock, writers: Int = 2, maxBatchSize: Int = 512,
        recordsActions: Bool = true, tweak: (inout PostgresStoreOptions) -> Void = { _ in }
    ) throws {
        var options = PostgresStoreOptions(
            url: url, schema: schema, writers: writers, readers: 4, maxBatchSize: maxBatchSize)
        tweak(&options)
        let availability = availability
        store = try PostgresStore(options: options, availabilityChanged: availability.append)
        service = ModerationService(
            store: store, now: clock.function,
            configuration: ModerationService.Configuration(
                passwordHasher: .fastForTests, memberPageCacheGroups: 0)) // as the server on PostgreSQL
        let delivered = delivered
        if recordsActions { service.addCommitListener { actions in delivered.append(actions) } }
    }

    /// A caller of app "app" acting as `actor` (nil: the app).
    func client(_ actor: String? = nil) -> ModerationClient {
        ModerationClient(service: service, caller: Caller(app: "app", actor: actor))
    }

    func close() {
        service.shutdown()
        store.close()
    }

    /// Two instances on a fresh schema, sharing a clock (`writers` each); `body` runs between
    /// that and their closing and the schema's drop.
    static func withPair(
        writers: Int = 2, _ body: (TestSchema, ManualWallClock, Instance, Instance) throws -> Void
    ) throws {
        let schema = try TestSchema()
        defer { schema.drop() }
        let clock = ManualWallClock()
        let first = try Instance(url: schema.url, schema: schema.name, clock: clock, writers: writers)
        defer { first.close() }
        let second = try Instance(url: schema.url, schema: schema.name, clock: clock, writers: writers)
        defer { second.close() }
        try body(schema, clock, first, second)
    }
}

/// A fresh schema on the shared test cluster, dropped by `drop()`.
struct TestSchema {
    let url: String
    let name: String

    init() throws {
        url = try PostgresCluster.shared().url
        name = PostgresCluster.uniqueSchema("store")
    }

    func drop() {
        PostgresCluster.dropSchema(name, url: url)
    }

    /// A query's first value, with the schema's tables in reach.
    func value(_ sql: String) throws -> String? {
        try PostgresCluster.value("SET search_path TO \(name); " + sql, url: url)
    }
}
