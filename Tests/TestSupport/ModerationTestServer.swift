public import Moderation
import ModerationEvents
public import RPCCore
public import RPCPosix
public import ServerApp
import Synchronization

/// The two apps `TestKeys` knows, as a test names them.
public enum TestApp: String, Sendable, CaseIterable {
    case one = "app1"
    case two = "app2"

    /// The API key of the app.
    public var apiKey: String {
        switch self {
        case .one: Frames.apiKey
        case .two: "key-of-app2"
        }
    }
}

/// The real moderation server in-process — built by `ModerationServer`, as `moderation-server`
/// builds it — on 127.0.0.1 (port chosen by the kernel) with a fresh data directory, `TestKeys`
/// as keys, a clock tests can move forward, and fast password hashing.
///
/// `restart()` stops it and opens a new one on the same directory (a clean restart);
/// `tearDown()` stops it and removes the directory.
public final class ModerationTestServer: Sendable {
    public let directory: TemporaryDirectory
    public let clock: OffsetClock
    public let moderation: ModerationServer
    public let port: UInt16
    private let tuning: ModerationServer.Tuning
    private let configureSettings: @Sendable (inout ServerSettings) -> Void
    private let connections = Mutex<[TestApp: ClientConnection]>([:])
    private let stopped = Atomic<Bool>(false)

    /// Starts a server.
    /// - Parameters:
    ///   - directory: the data directory (a new one by default; `restart` passes the old one).
    ///   - configure: changes to the tuning (retention, limits, workers) on top of the test defaults.
    ///   - settings: changes to the settings (caps, limits) on top of the test defaults; the
    ///     address and data directory are the server's own.
    public convenience init(
        directory: TemporaryDirectory = TemporaryDirectory(prefix: "moderation-e2e"),
        clock: OffsetClock = OffsetClock(),
        configure: (inout ModerationServer.Tuning) -> Void = { _ in },
        settings: @escaping @Sendable (inout ServerSettings) -> Void = { _ in }
    ) throws {
        var tuning = ModerationServer.Tuning()
        tuning.clock = clock.function
        tuning.passwordHasher = .fastForTests
        tuning.maintenanceIntervalMs = 0
        tuning.workers = 4
        configure(&tuning)
        try self.init(directory: directory, clock: clock, tuning: tuning, configureSettings: settings)
    }

    private init(
        directory: TemporaryDirectory, clock: OffsetClock, tuning: ModerationServer.Tuning,
        configureSettings: @escaping @Sendable (inout ServerSettings) -> Void
    ) throws {
        var settings = ServerSettings()
        settings.threads = 2
        configureSettings(&settings)
        settings.host = "127.0.0.1"
        settings.port = 0
        settings.dataDirectory = directory.path + "/data"
        self.directory = directory
        self.clock = clock
        self.tuning = tuning
        self.configureSettings = configureSettings
        moderation = try ModerationServer(
            settings: settings, authenticator: TestKeys(), logger: .disabled, tuning: tuning)
        port = try moderation.start()
    }

    /// The domain service behind the server (maintenance, hub statistics).
    public var service: ModerationService { moderation.service }

    /// The store's SQLite database file.
    public var databasePath: String { directory.path + "/data/moderation.sqlite3" }

    /// Subscriptions the event hub holds now (replaying or live).
    public var subscriptionCount: Int { moderation.hub.subscriptionCount }

    /// What clients make the server hold, by kind.
    public var memoryBudget: MemoryBudget { moderation.memoryBudget }

    /// Returns once the event hub's dispatcher has applied every subscription start and end
    /// queued so far.
    public func settleEvents() { moderation.hub.settle() }

    /// A new connection with `app`'s key.
    public func connect(_ app: TestApp = .one, acceptDeflate: Bool = true) throws(RPCError) -> ClientConnection {
        var options = ClientOptions(port: port, apiKey: app.apiKey)
        options.clientName = "service-tests"
        options.acceptDeflate = acceptDeflate
        return try ClientConnection.connect(options)
    }

    /// The connection of `app` that clients made by `client` share (opened on first use).
    public func sharedConnection(_ app: TestApp = .one) throws(RPCError) -> ClientConnection {
        if let existing = connections.withLock({ $0[app] }), existing.isUsable { return existing }
        let connection = try connect(app)
        connections.withLock { $0[app] = connection }
        return connection
    }

    /// A client acting as `uid` (nil: the app itself) on the app's shared connection.
    public func client(_ uid: String? = nil, app: TestApp = .one) throws(RPCError) -> ModerationWireClient {
        ModerationWireClient(connection: try sharedConnection(app), actor: uid ?? "")
    }

    /// A raw socket that has completed the handshake.
    public func rawOpen(_ app: TestApp = .one, acceptDeflate: Bool = false) throws -> RawConnection {
        let connection = try RawConnection(port: port)
        try connection.handshake(apiKey: app.apiKey, acceptDeflate: acceptDeflate)
        return connection
    }

    /// Runs the service's maintenance (expired bans, retention, idempotency window) and waits;
    /// returns how many bans expired and how many actions were pruned.
    @discardableResult
    public func runMaintenance() throws(ModerationError) -> (expiredBans: Int, prunedActions: Int) {
        let report = try service.runMaintenanceAndWait()
        return (report.expiredBans, report.prunedActions)
    }

    /// Shuts the server down gracefully (idempotent); the directory stays.
    public func stop(gracePeriodMs: Int = 2_000) {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        moderation.shutdown(gracePeriodMs: gracePeriodMs)
        for connection in connections.withLock({ Array($0.values) }) { connection.close() }
    }

    /// Stops this server and starts a new one on the same directory, clock and tuning.
    public func restart() throws -> ModerationTestServer {
        stop()
        return try ModerationTestServer(
            directory: directory, clock: clock, tuning: tuning, configureSettings: configureSettings)
    }

    /// Stops the server and removes its directory.
    public func tearDown() {
        stop()
        directory.remove()
    }
}
