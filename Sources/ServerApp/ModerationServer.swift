import CommandLineSupport
import GRPCMessages
import Glibc
public import Moderation
public import ModerationEvents
import ModerationMessages
import ModerationPostgres
import ModerationRPC
import ModerationSQLite
import ModerationWebhooks
import ProtoBridge
public import RPCCore
import RPCGRPC
import RPCMessages
public import RPCPosix
import Synchronization
public import TLSSupport
import WebhookDelivery

/// The moderation service on the RPC runtime, assembled from settings: the store (SQLite under
/// the data directory, or PostgreSQL at `--postgres-url`), the domain service, the event hub, the
/// method table (`moderation.v1` and the runtime services) and the RPC server.
///
/// `ServerMain` builds the process's server with it; tests build an in-process one the same way,
/// so what they exercise is what the executable serves.
public final class ModerationServer: Sendable {
    /// What an embedder (a test) may set beyond `ServerSettings`.
    public struct Tuning: Sendable {
        /// The service's clock, Unix milliseconds.
        public var clock: @Sendable () -> Int64 = ModerationService.systemClock
        /// How group passwords are hashed.
        public var passwordHasher: PasswordHasher = .standard
        /// The action log's retention in milliseconds; nil takes `ServerSettings.retentionHours`.
        public var actionRetentionMs: Int64?
        /// How often expired bans are swept and old actions pruned; 0 runs no maintenance loop.
        public var maintenanceIntervalMs: Int64 = 1_000
        /// Worker threads; 0 means the runtime's default.
        public var workers = 0
        /// Connection limits; `maxMessageBytes` and `maxConcurrentCalls` are taken from `ServerSettings`.
        public var limits = ServerLimits()
        /// Sends TestWebhook's pings in place of the server's webhook delivery (a test's recorder);
        /// nil: the delivery's own.
        public var webhookPinger: (any WebhookPinger)?
        /// Checks webhook URLs in place of the server's (which resolves the host and applies
        /// `--webhook-allow-private`): a test's stand-in where names do not resolve; nil: the server's.
        public var webhookURLCheck: (@Sendable (String) -> String?)?

        public init() {}
    }

    /// The chosen store, behind the domain's protocol; what only one kind has (statistics) is
    /// captured in `storeSamples` when it is opened.
    public let store: any ModerationStore
    public let service: ModerationService
    public let hub: EventHub
    /// What clients make this server hold (buffers, compression state, subscriptions), against
    /// the operator's limit; shared by the RPC server and the event hub.
    public let memoryBudget: MemoryBudget
    public let health: HealthStatus
    public let server: RPCServer
    /// The listener's TLS context (`--tls-cert`), which SIGHUP reloads; nil for plaintext.
    public let tls: ReloadableTLSContext?
    /// Calls, connections, traffic and the store's commits, for `/metrics`; also the access log.
    let metrics: ServerMetrics
    /// Returns the heap's free pages to the system after bursts of work while the server runs.
    private let heapTrimmer = Mutex<HeapTrimmer?>(nil)
    /// `--listen` as given, for the error when it cannot be bound.
    private let listenAddress: String
    /// The per-app rate limit's lease thread, on PostgreSQL (stopped with the store).
    private let rateLeases: LeasedRateLimiter?
    /// Webhook delivery: the HTTP client's thread, and the dispatcher reading the log for it.
    private let webhookClient: WebhookClient
    let webhooks: WebhookDispatcher
    /// The access log's writer when this server made it (its logger was not a `LogWriter`'s):
    /// stopped, after the last call, with the server.
    private let ownedLogWriter: LogWriter?

    /// Opens the store — SQLite in `settings.dataDirectory` (which must exist), or PostgreSQL at
    /// `settings.postgresURL` — and builds the server; it does not listen until `start()`.
    /// - Throws: `ServerStartupError` with the store's error as its cause when the store cannot be
    ///   opened: its message names the URL without its password, or, for SQLite, the process that
    ///   holds the data directory (one store, one process; see `DataDirectoryLock`).
    /// - Parameter apps: the apps with keys now, for the per-app metrics.
    public init(
        settings: ServerSettings, authenticator: any Authenticator, logger: Logger, tuning: Tuning = Tuning(),
        apps: @escaping @Sendable () -> [String] = { [] }
    ) throws(ServerStartupError) {
        // TLS first: a certificate that does not load stops the start before the store opens.
        tls = try Self.loadTLS(settings.tls)
        webhookClient = try Self.makeWebhookClient(settings)
        let storeSamples: @Sendable () -> [ServerMetrics.Sample]
        (store, storeSamples) = try Self.openStore(settings, health: StoreHealthLog(logger: logger))
        // A round of durable writes is reported together: its replies reach each event loop as
        // one batch, with one wake-up (not a wake-up, a turn and a write for every reply).
        store.setCompletionScope { round in WakeDeferral.batch { round() } }
        var serviceConfiguration = ModerationService.Configuration(
            passwordHasher: tuning.passwordHasher,
            actionRetentionMs: tuning.actionRetentionMs ?? Int64(settings.retentionHours) * 3_600_000,
            maintenanceIntervalMs: tuning.maintenanceIntervalMs, wrongPasswordLimit: settings.wrongPasswordLimit,
            webhookURLCheck: tuning.webhookURLCheck
                ?? AddressGuard(allowsPrivateAddresses: settings.webhookAllowPrivate).urlCheck)
        if settings.store == .postgres {
            // The member-page cache learns of profile changes from this process's UpdateUser
            // calls only; with other instances writing the same database it could show a name
            // another instance changed. Off until profile changes travel between instances.
            serviceConfiguration.memberPageCacheGroups = 0
        }
        service = ModerationService(store: store, now: tuning.clock, configuration: serviceConfiguration)
        webhooks = WebhookDispatcher(
            service: service, client: webhookClient,
            configuration: WebhookDispatcher.Configuration(owner: Self.webhookLeaseOwner()))
        memoryBudget = MemoryBudget(limit: settings.memoryBudget.limit(available: AvailableMemory.bytes()))
        hub = EventHub(
            service: service, encode: ModerationRPC.encodeEvent,
            maxSubscriptionsPerApp: settings.maxSubscriptionsPerApp, memoryBudget: memoryBudget)
        listenAddress = settings.listenAddress
        health = HealthStatus()

        var methods = MethodTable()
        ModerationRPC.register(
            in: &methods, service: service, hub: hub, webhookPinger: tuning.webhookPinger ?? webhooks)
        GRPCHealth.register(in: &methods, health: health)
        let reflected = [RPCSchema.fileDescriptorSet, ModerationSchema.fileDescriptorSet]
        RuntimeServices.register(in: &methods, health: health, fileDescriptorSets: reflected)

        let service = self.service
        let hub = self.hub
        let webhooks = self.webhooks
        let budget = memoryBudget
        let accessLog: AccessLog?
        if settings.accessLog, logger.isEnabled(.info), let output = logger.output {
            // The process's writer when `ServerMain` made one, so that every line goes through one
            // thread; a logger of another kind (tests') gets a writer of this server's own.
            let shared = output as? LogWriter
            let writer = shared ?? LogWriter(destination: output)
            ownedLogWriter = shared == nil ? writer : nil
            accessLog = AccessLog(
                writer: writer, format: logger.format,
                selection: AccessLog.Selection(
                    sampleEvery: settings.accessLogSample, includeInternal: settings.accessLogInternal),
                methods: methods.methods.map(\.path))
        } else {
            ownedLogWriter = nil
            accessLog = nil
        }
        let accessLogDropped = accessLog
        let storeKind = settings.store
        metrics = ServerMetrics(
            methods: methods.methods.map(\.path), serverStreaming: methods.methods.map(\.serverStreaming),
            accessLog: accessLog, apps: apps,
            gauges: {
                ServerGauges.buildInfoSamples(store: storeKind)
                    + ServerGauges.sample(hub: hub, service: service, store: storeSamples(), apps: apps())
                    + ServerGauges.budgetSamples(budget) + ServerGauges.accessLogSamples(accessLogDropped)
                    + ServerGauges.webhookSamples(webhooks.statistics, now: service.now)
            })
        var configuration = RPCServer.Configuration()
        configuration.host = settings.host
        configuration.port = settings.port
        configuration.eventLoops = settings.threads
        configuration.workers = tuning.workers
        configuration.limits = tuning.limits
        configuration.limits.maxMessageBytes = settings.maxMessageBytes
        configuration.limits.maxConcurrentCalls = settings.maxConcurrentCalls
        configuration.maxConnections = settings.maxConnections
        configuration.maxConnectionsPerApp = settings.maxConnectionsPerApp
        configuration.limits.frameTimeoutMs = settings.frameTimeoutMs
        configuration.observer = metrics
        configuration.memoryBudget = memoryBudget
        let rate = Double(settings.rateLimit)
        let burst = Double(settings.rateBurst > 0 ? settings.rateBurst : settings.rateLimit)
        if settings.rateLimit > 0, let postgres = store as? PostgresStore {
            // Instances share the database: each leases its calls from the app's bucket there.
            let leased = LeasedRateLimiter(
                callsPerSecond: rate, burst: burst,
                source: PostgresRateTokens(store: postgres, rate: rate, burst: burst))
            rateLeases = leased
            configuration.rateLimiter = leased
        } else {
            rateLeases = nil
            if settings.rateLimit > 0 {
                configuration.rateLimiter = TokenBucketLimiter(callsPerSecond: rate, burst: burst)
            }
        }
        configuration.tls = tls
        // Every listener serves both wires: our protocol, and standard gRPC with the method table
        // and server reflection (a bidirectional method, which the gRPC codec serves itself).
        let services = Set(methods.methods.map(\.service)).union([
            "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection",
        ])
        do {
            let reflection = try GRPCReflection(
                fileDescriptorSets: [
                    ModerationSchema.fileDescriptorSet, RPCSchema.fileDescriptorSet, GRPCSchema.fileDescriptorSet,
                ], services: Array(services))
            configuration.grpc = GRPCWire(bidirectional: [reflection])
        } catch {
            // The descriptor sets are built in: a failure here is a build's bug, not the operator's.
            preconditionFailure("the built-in descriptor sets do not index: \(error)")
        }
        if let grpc = settings.grpcListen {
            configuration.extraListeners.append(
                RPCServer.ListenerConfiguration(name: Self.grpcListener, host: grpc.host, port: grpc.port, tls: tls))
        }
        if let plaintext = settings.plaintextListen {
            precondition(tls != nil, "--plaintext-listen without TLS: the settings parser refuses it")
            configuration.extraListeners.append(
                RPCServer.ListenerConfiguration(
                    name: Self.plaintextListener, host: plaintext.host, port: plaintext.port, tls: nil))
        }
        configuration.serverName = ServerInfo.name
        configuration.serverVersion = ServerInfo.version
        configuration.schemaDigest = SchemaDigest.of(reflected.reduce([], +))
        configuration.logger = logger
        server = RPCServer(configuration: configuration, methods: methods, authenticator: authenticator)
    }

    /// The listener's TLS context from `--tls-cert`, `--tls-key` and `--tls-client-ca`.
    private static func loadTLS(_ settings: TLSSettings?) throws(ServerStartupError) -> ReloadableTLSContext? {
        guard let settings else { return nil }
        do {
            return try ReloadableTLSContext(try settings.configuration())
        } catch let error as TLSError {
            throw ServerStartupError("cannot set up TLS: \(error.message)", cause: error)
        } catch {
            throw ServerStartupError("cannot set up TLS: \(error)", cause: error)
        }
    }

    /// The webhook client: its thread, timeouts, the SSRF guard's policy, and trust.
    private static func makeWebhookClient(_ settings: ServerSettings) throws(ServerStartupError) -> WebhookClient {
        var configuration = WebhookClientConfiguration()
        configuration.allowsPrivateAddresses = settings.webhookAllowPrivate
        configuration.extraCAFile = settings.webhookCAFile
        do {
            return try WebhookClient(configuration: configuration)
        } catch {
            throw ServerStartupError("cannot set up webhook delivery: \(error.message)", cause: error)
        }
    }

    /// This process's name in webhook leases: host, process id and a random part, so that a
    /// restarted process (same pid in a new container) is not taken for the old one.
    private static func webhookLeaseOwner() -> String {
        var host = [CChar](repeating: 0, count: 256)
        gethostname(&host, host.count - 1)
        let name = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return "\(name)/\(getpid())/\(UInt32.random(in: 0...UInt32.max))"
    }

    /// The store `settings` choose, opened, with what `/metrics` samples of it.
    /// - Parameter health: where PostgreSQL's outages and returns are logged.
    private static func openStore(_ settings: ServerSettings, health: StoreHealthLog) throws(ServerStartupError) -> (
        any ModerationStore, @Sendable () -> [ServerMetrics.Sample]
    ) {
        switch settings.store {
        case .sqlite:
            do throws(ModerationError) {
                let store = try SQLiteStore(
                    options: SQLiteStoreOptions(
                        directory: settings.dataDirectory, durability: settings.durability,
                        cacheSizeKiB: settings.sqliteCacheMiB * 1024))
                return (store, { ServerGauges.storeSamples(store.statistics) })
            } catch {
                // Another server (or any process with the store open) holds the directory's lock.
                let advice =
                    error.details[DataDirectoryLock.holderDetail] != nil
                    ? "; stop that process first, or give this server a --data-dir of its own" : ""
                throw ServerStartupError(
                    "cannot open the store in --data-dir \(settings.dataDirectory): \(error.message)\(advice)",
                    cause: error)
            }
        case .postgres:
            guard let url = settings.postgresURL else {
                let message = "--store postgres needs --postgres-url"
                throw ServerStartupError(message, cause: ConfigurationError(message))
            }
            do throws(ModerationError) {
                let store = try PostgresStore(
                    options: PostgresStoreOptions(
                        url: url, schema: settings.postgresSchema, writers: settings.postgresWriters,
                        readers: settings.postgresReaders, pollIntervalMs: settings.postgresPollMs,
                        readCacheEntries: settings.postgresReadCache),
                    availabilityChanged: health.record)
                return (store, { ServerGauges.storeSamples(store.statistics, available: store.isAvailable) })
            } catch {
                throw ServerStartupError(
                    "cannot open the PostgreSQL store at \(PostgresURL.redacted(url)) (schema \(settings.postgresSchema)): "
                        + error.message, cause: error)
            }
        }
    }

    /// The flags that name the extra listeners, which is what the server calls them.
    static let grpcListener = "--grpc-listen"
    static let plaintextListener = "--plaintext-listen"

    /// The `--grpc-listen` port once started; nil when it is off.
    public var grpcPort: UInt16? { server.boundPort(named: Self.grpcListener) }

    /// The `--plaintext-listen` port once started; nil when there is none.
    public var plaintextPort: UInt16? { server.boundPort(named: Self.plaintextListener) }

    /// Starts listening; returns the bound port.
    /// - Throws: `ServerStartupError` with the `SystemError` as its cause when the address cannot
    ///   be bound (nothing is left running then).
    @discardableResult
    public func start() throws(ServerStartupError) -> UInt16 {
        do throws(SystemError) {
            let port = try server.start()
            let metrics = self.metrics
            heapTrimmer.withLock { $0 = HeapTrimmer(activity: { metrics.activity }) }
            webhooks.start()
            return port
        } catch {
            close()
            // The error names the address (and the flag, for an extra listener): "cannot listen on
            // HOST:PORT (--grpc-listen): …", and the advice the flag that moves it.
            let advice =
                if error.operation.contains("(\(Self.grpcListener))") {
                    "; give --grpc-listen another HOST:PORT, or off"
                } else if error.operation.contains("(\(Self.plaintextListener))") {
                    "; give --plaintext-listen another HOST:PORT"
                } else {
                    "; give --listen another HOST:PORT"
                }
            throw ServerStartupError("cannot \(error)\(advice)", cause: error)
        }
    }

    /// Graceful shutdown: health turns NOT_SERVING, connections drain (streams end with
    /// UNAVAILABLE and their last seq), then the hub, the service and the store stop.
    public func shutdown(gracePeriodMs: Int) {
        health.setServing(false)
        server.shutdown(gracePeriodMs: gracePeriodMs)
        close()
    }

    /// Stops the hub and the service and closes the store (the RPC server must not be running).
    private func close() {
        heapTrimmer.withLock { trimmer in
            trimmer?.stop()
            trimmer = nil
        }
        webhooks.stop()
        webhookClient.shutdown()
        hub.shutdown()
        service.shutdown()
        rateLeases?.close()
        store.close()
        ownedLogWriter?.stop()
    }
}
