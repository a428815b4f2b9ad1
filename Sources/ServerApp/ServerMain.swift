import CommandLineSupport
internal import Glibc
import Moderation
import ModerationSQLite
import RPCCore
import RPCPosix
import TLSSupport

/// The moderation server's process: settings, keys, services, the RPC server, signals.
///
/// `main.swift` of the executable only calls `ServerMain.run`; everything here can be driven
/// from tests with arguments and an environment.
public enum ServerMain {
    /// Runs the server until SIGTERM or SIGINT; returns the process exit code.
    public static func run(arguments: [String], environment: [String: String]) -> Int32 {
        if arguments.first == "backup" {
            return backup(arguments: Array(arguments.dropFirst()), environment: environment)
        }
        let settings: ServerSettings
        do {
            switch try ServerSettingsParser.parse(arguments: arguments, environment: environment) {
            case .help(let text):
                print(text)
                return 0
            case .version(let text):
                print(text)
                return 0
            case .run(let parsed):
                settings = parsed
            }
        } catch {
            // The settings did not parse, so their format is what the command line and the
            // environment ask for, if they can tell.
            let format = requestedLogFormat(arguments: arguments, environment: environment)
            FileOutput.writeAll(Array(startupError("moderation-server: \(error.message)", format: format).utf8), to: 2)
            return 2
        }
        // Signals are handled by this thread with sigwait; every thread started from here on
        // (the log writer first) inherits the blocked mask. A thread started before would take a
        // second SIGTERM during the drain with the default action: death.
        signal(SIGPIPE, SIG_IGN)
        var signals = sigset_t()
        sigemptyset(&signals)
        for sig in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&signals, sig) }
        pthread_sigmask(SIG_BLOCK, &signals, nil)

        // Every line of the process goes through the one writer thread (the access log's too);
        // it is stopped, and so has written everything, before `run` returns.
        let logWriter = LogWriter()
        defer { logWriter.stop() }
        let logger = Logger(level: settings.logLevel, format: settings.logFormat, output: logWriter)
        /// A start that fails: its reason as an error line, in the log's format.
        func printError(_ message: String) {
            logWriter.write(Array(startupError(message, format: settings.logFormat).utf8))
        }

        // A start that fails takes back what it made: the data directory, the default key file,
        // a new store's files.
        let footprint = StartupFootprint(dataDirectory: settings.dataDirectory)
        let created = FileSystem.makeDirectories(settings.dataDirectory)
        guard created == 0, FileSystem.isWritableDirectory(settings.dataDirectory) else {
            let reason = created != 0 ? FileSystem.describe(errno: created) : "not writable"
            printError("moderation-server: --data-dir \(settings.dataDirectory) is unusable: \(reason)")
            footprint.remove()
            return 1
        }

        let keys: [APIKeyStore.Entry]
        do {
            keys = try loadKeys(settings, logger: logger)
        } catch {
            printError("moderation-server: \(error.message)")
            footprint.remove()
            return 1
        }
        let keyStore = APIKeyStore(keys)

        // Every connection is a descriptor: allow as many as the hard limit lets us.
        var files = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &files) == 0, files.rlim_cur < files.rlim_max {
            files.rlim_cur = files.rlim_max
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &files)
        }

        let moderation: ModerationServer
        do throws(ServerStartupError) {
            moderation = try ModerationServer(
                settings: settings, authenticator: keyStore, logger: logger, apps: { keyStore.appIDs })
        } catch {
            printError("moderation-server: \(error.message)")
            footprint.remove()
            return 1
        }
        let port: UInt16
        do throws(ServerStartupError) {
            port = try moderation.start()
        } catch {
            printError("moderation-server: \(error.message)")
            moderation.shutdown(gracePeriodMs: 0)
            footprint.remove()
            return 1
        }
        var endpoint: MetricsEndpoint?
        if let metricsListen = settings.metricsListen {
            let host = metricsListen.host
            do throws(SystemError) {
                let metrics = moderation.metrics
                let health = moderation.health
                endpoint = try MetricsEndpoint(
                    host: host, port: metricsListen.port, render: metrics.render, healthy: { health.isServing })
                logger.info("metrics served", [("listen", "http://\(host):\(endpoint!.port)/metrics")])
            } catch {
                printError(
                    "moderation-server: cannot serve metrics on --metrics-listen \(host):\(metricsListen.port): \(error)"
                )
                moderation.shutdown(gracePeriodMs: 0)
                footprint.remove()
                return 1
            }
        }
        var bound = settings
        bound.port = port
        // The readiness line, on standard output: plain text, or a JSON object whose message has
        // the same words, in JSON mode.
        let ready = "listening on \(bound.listenAddress)"
        switch settings.logFormat {
        case .text: writeLine(ready, to: 1)
        case .json:
            FileOutput.writeAll(Array(logger.render(.info, ready, [("listen", bound.listenAddress)]).utf8), to: 1)
        }
        let grpcAddress = settings.grpcListen.flatMap { listen in
            moderation.grpcPort.map { HostPort(host: listen.host, port: $0).description }
        }
        let plaintextAddress = settings.plaintextListen.flatMap { listen in
            moderation.plaintextPort.map { HostPort(host: listen.host, port: $0).description }
        }
        // One line on standard output, as before: tools read its address and may close the pipe.
        // The other listeners are bound by then; their addresses are in the "server started" line.
        let budget = moderation.memoryBudget
        var started: [(String, String)] = [("listen", bound.listenAddress), ("grpc_listen", grpcAddress ?? "off")]
        if let plaintextAddress { started.append(("plaintext_listen", plaintextAddress)) }
        started += [
            ("wires", "mrpc,grpc"), ("apps", keyStore.appIDs.joined(separator: ",")),
            ("memory_budget", budget.isLimited ? "\(budget.limit >> 20) MiB" : "off"),
            ("tls", tlsDescription(moderation.tls)),
        ]
        logger.info("server started", started)
        for warning in plaintextWarnings(
            settings, tls: moderation.tls, listen: bound.listenAddress, grpc: grpcAddress, plaintext: plaintextAddress)
        {
            logger.warning(warning)
        }

        while true {
            var received: Int32 = 0
            sigwait(&signals, &received)
            if received == SIGHUP {
                do {
                    keyStore.replace(try loadKeys(settings, logger: logger))
                    logger.notice("API keys reloaded", [("apps", keyStore.appIDs.joined(separator: ","))])
                } catch {
                    logger.error("API keys not reloaded: \(error.message); the previous keys stay in use")
                }
                reloadTLS(moderation.tls, logger: logger)
                continue
            }
            logger.notice(
                "shutting down: draining connections", [("signal", received == SIGTERM ? "SIGTERM" : "SIGINT")])
            endpoint?.stop()
            moderation.shutdown(gracePeriodMs: settings.shutdownGraceSeconds * 1000)
            logger.notice("shutdown complete")
            return 0
        }
    }

    /// SIGHUP: the listener's certificate, key and client CA are read again; connections accepted
    /// from now on get them, open ones keep theirs. Files that do not load leave the previous
    /// ones in use.
    static func reloadTLS(_ tls: ReloadableTLSContext?, logger: Logger) {
        guard let tls else { return }
        do throws(TLSError) {
            let context = try tls.reload()
            logger.notice("TLS certificate reloaded", [("certificate", context.certificateSummary ?? "-")])
        } catch {
            logger.error("TLS certificate not reloaded: \(error.message); the previous certificate stays in use")
        }
    }

    /// "off", or what the listener presents and asks for.
    static func tlsDescription(_ tls: ReloadableTLSContext?) -> String {
        guard let tls else { return "off" }
        let certificate = tls.current.certificateSummary ?? tls.configuration.certificateChainFile
        return certificate + (tls.configuration.clientCAFile != nil ? "; client certificates required" : "")
    }

    /// What to warn about the listeners that serve without TLS: any of them off loopback (keys
    /// cross the network in clear), and `--plaintext-listen` with client certificates required
    /// (it serves without them, on any address).
    static func plaintextWarnings(
        _ settings: ServerSettings, tls: ReloadableTLSContext?, listen: String, grpc: String?, plaintext: String?
    ) -> [String] {
        var warnings: [String] = []
        let clear = "API keys and data cross the network in clear"
        if tls == nil {
            if !isLoopback(settings.host) {
                warnings.append(
                    "listening on \(listen) in plaintext: \(clear); give --tls-cert and --tls-key, or listen on a "
                        + "loopback address")
            }
            if let grpcListen = settings.grpcListen, !isLoopback(grpcListen.host) {
                warnings.append(
                    "listening on \(grpc ?? grpcListen.description) (--grpc-listen) in plaintext: \(clear); give "
                        + "--tls-cert and --tls-key, or listen on a loopback address")
            }
        }
        if let plaintextListen = settings.plaintextListen {
            let address = plaintext ?? plaintextListen.description
            if tls?.configuration.clientCAFile != nil {
                warnings.append(
                    "--plaintext-listen \(address) serves without TLS, so without the client certificates "
                        + "--tls-client-ca requires: anyone who can reach it needs only an API key")
            } else if !isLoopback(plaintextListen.host) {
                warnings.append("--plaintext-listen \(address) serves without TLS: \(clear)")
            }
        }
        return warnings
    }

    /// True for 127.0.0.0/8, ::1 and localhost: the addresses no other machine reaches.
    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }

    /// `moderation-server backup --output FILE [--data-dir DIR]`: an online copy of the store.
    static func backup(arguments: [String], environment: [String: String]) -> Int32 {
        var directory = environment["MODERATION_DATA_DIR"] ?? "./data"
        var store = environment["MODERATION_STORE"] ?? StoreKind.sqlite.rawValue
        var output: String?
        var reader = ArgumentReader(arguments)
        do throws(ArgumentError) {
            while let token = reader.next() {
                switch token {
                case .flag(let flag) where flag.name == "--help" || flag.name == "-h":
                    print(
                        """
                        usage: moderation-server backup --output FILE [--data-dir DIR]

                        Copies the store in DIR (default ./data, or MODERATION_DATA_DIR) to FILE with SQLite's
                        online backup API, while the server keeps running. Restore: stop the server, remove
                        DIR/moderation.sqlite3-wal and -shm, and copy FILE to DIR/moderation.sqlite3.
                        """)
                    return 0
                case .flag(let flag) where flag.name == "--data-dir": directory = try reader.value(for: flag).text
                case .flag(let flag) where flag.name == "--store": store = try reader.value(for: flag).text
                case .flag(let flag) where flag.name == "--output" || flag.name == "-o":
                    output = try reader.value(for: flag).text
                default: throw ArgumentError("unknown argument '\(token.argument)' (see backup --help)")
                }
            }
        } catch {
            printError("moderation-server backup: \(error.message)")
            return 2
        }
        guard store == StoreKind.sqlite.rawValue else {
            printError(
                "moderation-server backup: copies the SQLite store only; back up the PostgreSQL store with "
                    + "PostgreSQL's own tools (pg_dump, or base backups with WAL archiving: docs/OPERATIONS.md)")
            return 2
        }
        guard let output else {
            printError("moderation-server backup: --output FILE is required")
            return 2
        }
        do throws(ModerationError) {
            let pages = try SQLiteBackup.copy(directory: directory, to: output)
            print("backed up \(pages) pages of \(directory)/moderation.sqlite3 to \(output)")
            return 0
        } catch {
            printError("moderation-server backup: \(error.message)")
            return 1
        }
    }

    /// Keys from flags, the keys file, or — when neither gives any — the default key file under
    /// the data directory, created with one random key for app "default" on first start.
    static func loadKeys(_ settings: ServerSettings, logger: Logger) throws(ConfigurationError) -> [APIKeyStore.Entry] {
        var keys = settings.apiKeys
        if let file = settings.apiKeysFile {
            keys += try readKeysFile(file, setting: "--api-keys-file")
        }
        if keys.isEmpty {
            let path = settings.dataDirectory + "/api-keys"
            if !FileSystem.exists(path) {
                let status = FileSystem.createPrivateFile(
                    path,
                    text: "# API keys of this server, one APP_ID:KEY a line.\ndefault:\(APIKeyStore.randomKey())\n")
                guard status == 0 else {
                    throw ConfigurationError(
                        "cannot create the default API key file \(path): \(FileSystem.describe(errno: status))")
                }
                logger.notice("no API key configured; created one for app 'default' in \(path)")
            } else {
                logger.info("no API key configured; using the keys in \(path)")
            }
            keys = try readKeysFile(path, setting: "the default API key file")
        }
        var seen: [String: String] = [:]
        for entry in keys {
            if let other = seen[entry.key], other != entry.appID {
                throw ConfigurationError("the same API key is configured for apps '\(other)' and '\(entry.appID)'")
            }
            seen[entry.key] = entry.appID
        }
        return keys
    }

    static func readKeysFile(_ path: String, setting: String) throws(ConfigurationError) -> [APIKeyStore.Entry] {
        let text: String
        do throws(SystemError) {
            text = try FileSystem.readText(path)
        } catch {
            throw ConfigurationError("\(setting) \(path) cannot be read: \(FileSystem.describe(errno: error.errno))")
        }
        var entries: [APIKeyStore.Entry] = []
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let entry = APIKeyStore.parseEntry(line) else {
                throw ConfigurationError("\(setting) \(path), line \(number + 1): expected APP_ID:KEY")
            }
            entries.append(entry)
        }
        return entries
    }

    static func printError(_ message: String) {
        writeLine(message, to: 2)
    }

    /// A message that stops the start, as a line of the log: as it is in the text format, an
    /// `error` object in the JSON format (a line of `Logger`'s own making, so that in JSON mode
    /// every line the server writes is JSON).
    static func startupError(_ message: String, format: Logger.Format) -> String {
        switch format {
        case .text: message + "\n"
        case .json: Logger(level: .error, format: .json).render(.error, message, [])
        }
    }

    /// The log format the command line or `MODERATION_LOG_FORMAT` asks for, read on its own for
    /// when the settings as a whole do not parse: JSON only when it is plainly asked for.
    static func requestedLogFormat(arguments: [String], environment: [String: String]) -> Logger.Format {
        var requested = environment["MODERATION_LOG_FORMAT"]
        for (index, argument) in arguments.enumerated() {
            if argument == "--log-format", index + 1 < arguments.count {
                requested = arguments[index + 1]
            } else if argument.hasPrefix("--log-format=") {
                requested = String(argument.dropFirst("--log-format=".count))
            }
        }
        return requested == "json" ? .json : .text
    }

    /// Writes a line straight to a file descriptor (unbuffered, so it is seen at once).
    static func writeLine(_ message: String, to fd: Int32) {
        var line = message + "\n"
        line.withUTF8 { _ = write(fd, $0.baseAddress, $0.count) }
    }
}

extension Substring {
    func trimmingWhitespace() -> String {
        String(drop(while: { $0.isWhitespace }).reversed().drop(while: { $0.isWhitespace }).reversed())
    }
}
