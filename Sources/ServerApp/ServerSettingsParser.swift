import CommandLineSupport
import ModerationPostgres
import ModerationSQLite
import NameSuggestion
import RPCCore
import RPCPosix

/// Reads flags, `MODERATION_…` environment variables and a config file into `ServerSettings`.
///
/// Precedence: flags, then variables, then the config file, then the defaults. Every source goes
/// through the one option table, so a setting is read the same way from each; an error names its
/// source (`MODERATION_THREADS: …`, `--config FILE, line 3: …`, or the flag itself).
public enum ServerSettingsParser {
    /// One option: its flag, its environment variable, its help, and how it changes the settings.
    struct Option: Sendable {
        let flag: String
        /// What the value looks like ("N", "HOST:PORT"), for the help and a missing value.
        let argument: String
        let help: String
        /// For an option that may be given several times: empties what the file and the variables
        /// gave, before the first flag adds to it (flags replace them; repeated flags add up).
        let clearBeforeFlags: (@Sendable (inout ServerSettings) -> Void)?
        /// A switch: on when given bare on the command line (`--flag`, or `--flag=off`); in the
        /// config file and the environment it takes on or off like any value.
        let isSwitch: Bool
        let apply: @Sendable (inout ServerSettings, ArgumentValue) throws(ArgumentError) -> Void

        init(
            _ flag: String, _ argument: String, help: String,
            clearBeforeFlags: (@Sendable (inout ServerSettings) -> Void)? = nil, isSwitch: Bool = false,
            apply: @escaping @Sendable (inout ServerSettings, ArgumentValue) throws(ArgumentError) -> Void
        ) {
            self.flag = flag
            self.argument = argument
            self.help = help
            self.clearBeforeFlags = clearBeforeFlags
            self.isSwitch = isSwitch
            self.apply = apply
        }

        var environmentName: String {
            "MODERATION_" + flag.dropFirst(2).uppercased().replacingOccurrences("-", with: "_")
        }

        /// A whole number in `range`, kept in `setting`.
        static func integer(
            _ flag: String, _ argument: String, help: String,
            _ setting: any WritableKeyPath<ServerSettings, Int> & Sendable, in range: ClosedRange<Int>
        ) -> Option {
            Option(flag, argument, help: help) { settings, value throws(ArgumentError) in
                settings[keyPath: setting] = try value.integer(in: range)
            }
        }

        /// One case of a string enum by its raw value, kept in `setting`.
        static func choice<Choice: CaseIterable & RawRepresentable<String> & Sendable>(
            _ flag: String, _ argument: String, help: String,
            _ setting: any WritableKeyPath<ServerSettings, Choice> & Sendable
        ) -> Option {
            Option(flag, argument, help: help) { settings, value throws(ArgumentError) in
                settings[keyPath: setting] = try value.choice(of: Choice.self)
            }
        }

        /// An address of a listener that is off unless given, kept in `setting`.
        static func hostPort(
            _ flag: String, help: String, _ setting: any WritableKeyPath<ServerSettings, HostPort?> & Sendable
        ) -> Option {
            Option(flag, "HOST:PORT", help: help) { settings, value throws(ArgumentError) in
                settings[keyPath: setting] = try value.hostPort()
            }
        }

        /// On or off, kept in `setting`; `isSwitch` lets the flag stand bare.
        static func onOff(
            _ flag: String, _ argument: String, help: String,
            _ setting: any WritableKeyPath<ServerSettings, Bool> & Sendable, isSwitch: Bool = false
        ) -> Option {
            Option(flag, argument, help: help, isSwitch: isSwitch) { settings, value throws(ArgumentError) in
                settings[keyPath: setting] = try value.onOff()
            }
        }

        /// A file or directory: any path but an empty one, which is more likely an unset shell
        /// variable than a path meant.
        static func path(
            _ flag: String, _ argument: String, help: String,
            store: @escaping @Sendable (inout ServerSettings, String) -> Void
        ) -> Option {
            Option(flag, argument, help: help) { settings, value throws(ArgumentError) in
                guard !value.text.isEmpty else { throw value.error("the path is empty") }
                store(&settings, value.text)
            }
        }

        /// One of the TLS files; any of them turns TLS on, and `TLSSettings.configuration()`
        /// says which are missing.
        static func tlsFile(
            _ flag: String, help: String, _ file: any WritableKeyPath<TLSSettings, String?> & Sendable
        ) -> Option {
            path(flag, "FILE", help: help) { settings, path in
                settings.tls = settings.tls ?? TLSSettings()
                settings.tls?[keyPath: file] = path
            }
        }
    }

    static let options: [Option] = [
        Option("--listen", "HOST:PORT", help: "address to listen on (default 127.0.0.1:7600)") {
            settings, value throws(ArgumentError) in
            let address = try value.hostPort()
            (settings.host, settings.port) = (address.host, address.port)
        },
        Option(
            "--grpc-listen", "HOST:PORT|off",
            help:
                "a second address serving the same as --listen (gRPC and our protocol, the same TLS); off for none "
                + "(default 127.0.0.1:7601)"
        ) { settings, value throws(ArgumentError) in
            settings.grpcListen = value.text == "off" ? nil : try value.hostPort()
        },
        Option.hostPort(
            "--plaintext-listen",
            help: "with --tls-cert: an address served without TLS (and so without client certificates)",
            \.plaintextListen),
        Option.choice(
            "--store", "KIND", help: "sqlite (embedded, the default) or postgres (shared; needs --postgres-url)",
            \.store),
        Option(
            "--postgres-url", "URL",
            help: "the database of --store postgres: postgresql://USER@HOST:PORT/DB (its password is never logged)"
        ) { settings, value throws(ArgumentError) in
            // The value is never repeated in an error: it may hold a password.
            let text = value.text
            guard text.hasPrefix("postgresql://") || text.hasPrefix("postgres://") || text.contains("=") else {
                throw value.error("expected postgresql://USER@HOST:PORT/DB (or libpq's key=value form)")
            }
            settings.postgresURL = text
        },
        Option("--postgres-schema", "NAME", help: "schema of the tables in that database (default public)") {
            settings, value throws(ArgumentError) in
            guard PostgresStoreOptions.isValidSchema(value.text) else {
                throw value.error("expected a lowercase name of letters, digits and _ (at most 63)")
            }
            settings.postgresSchema = value.text
        },
        Option.integer(
            "--postgres-readers", "N", help: "reader connections to PostgreSQL (default 16)", \.postgresReaders,
            in: 1...1024),
        Option.integer(
            "--postgres-writers", "N", help: "writer connections to PostgreSQL, each its own batches (default 2)",
            \.postgresWriters, in: 1...64),
        Option.integer(
            "--postgres-poll-ms", "MS",
            help: "how often other instances' commits are polled for, besides LISTEN (default 250)",
            \.postgresPollMs, in: 10...60_000),
        Option.integer(
            "--postgres-read-cache", "N",
            help: "entries of the read cache of groups, memberships and member pages; 0 off (default 200000)",
            \.postgresReadCache, in: 0...100_000_000),
        Option.path("--data-dir", "PATH", help: "directory of the embedded SQLite store (default ./data)") {
            $0.dataDirectory = $1
        },
        Option(
            "--api-key", "APP_ID:KEY", help: "an accepted API key (repeatable; env: comma-separated)",
            clearBeforeFlags: { $0.apiKeys = [] }
        ) { settings, value throws(ArgumentError) in
            for item in value.text.split(separator: ",").map(String.init) where !item.isEmpty {
                guard let entry = APIKeyStore.parseEntry(item) else {
                    throw value.error(
                        "expected APP_ID:KEY with an app id of [A-Za-z0-9_.-] and a key of at least 8 characters without spaces"
                    )
                }
                settings.apiKeys.append(entry)
            }
        },
        Option("--api-keys-file", "PATH", help: "file of API keys, one APP_ID:KEY a line (# comments)") {
            settings, value throws(ArgumentError) in
            settings.apiKeysFile = value.text
        },
        Option.integer("--threads", "N", help: "event loops (default: one per usable core)", \.threads, in: 1...256),
        Option.integer(
            "--max-message-bytes", "N", help: "largest message body accepted or sent (default 4194304)",
            \.maxMessageBytes, in: 1024...(256 * 1024 * 1024)),
        Option("--log-level", "LEVEL", help: "trace, debug, info, notice, warning or error (default info)") {
            settings, value throws(ArgumentError) in
            settings.logLevel = try value.choice(Logger.Level.allCases.map { ($0.name, $0) }, ignoringCase: true)
        },
        Option.choice("--log-format", "FORMAT", help: "text or json (default text)", \.logFormat),
        Option.choice(
            "--durability", "MODE", help: "full (fsync before OK, default) or normal (no fsync per commit)",
            \.durability),
        Option.integer(
            "--sqlite-cache-mib", "MIB", help: "SQLite page cache per connection, 17 connections (default 2)",
            \.sqliteCacheMiB, in: 1...65_536),
        Option.integer(
            "--retention-hours", "HOURS", help: "how long the action log keeps actions (default 168)", \.retentionHours,
            in: 1...(24 * 3650)),
        Option.hostPort(
            "--metrics-listen", help: "serve Prometheus metrics on http://HOST:PORT/metrics (default off)",
            \.metricsListen),
        Option.onOff("--access-log", "on|off", help: "one info line per call (default on)", \.accessLog),
        Option.integer(
            "--access-log-sample", "N",
            help: "log one successful call in N (failed calls always; default 1: every call)",
            \.accessLogSample, in: 1...1_000_000),
        Option.onOff(
            "--access-log-internal", "on|off",
            help: "also log calls of the reflection and health services, which tools make (default off)",
            \.accessLogInternal),
        Option.integer(
            "--max-connections", "N", help: "connections beyond N are refused at once (default 100000)",
            \.maxConnections, in: 1...10_000_000),
        // Hostile clients: the per-app connection cap, the memory budget, the frame timeout.
        Option.integer(
            "--max-connections-per-app", "N", help: "connections one app may hold (default 50000)",
            \.maxConnectionsPerApp, in: 1...10_000_000),
        Option(
            "--memory-budget", "SIZE",
            help: "what clients may make the server hold: 512MiB, 2GiB, bytes, off (default: half the memory)"
        ) { settings, value throws(ArgumentError) in
            switch value.text.lowercased() {
            case "off": settings.memoryBudget = .off
            case "auto": settings.memoryBudget = .automatic
            default: settings.memoryBudget = .bytes(try value.byteSize(in: (1 << 20)...(1 << 50)))
            }
        },
        Option("--frame-timeout", "DURATION", help: "time for the rest of a frame once it began (default 30s)") {
            settings, value throws(ArgumentError) in
            let seconds = try value.duration()
            guard seconds >= 0.1, seconds <= 3600 else { throw value.error("'\(value.text)' is not from 100ms to 1h") }
            settings.frameTimeoutMs = Int((seconds * 1000).rounded())
        },
        Option.integer(
            "--max-concurrent-calls", "N", help: "calls in flight per connection (default 1024)", \.maxConcurrentCalls,
            in: 1...1_000_000),
        Option.integer(
            "--max-subscriptions-per-app", "N",
            help: "event-stream subscriptions one app may have open at once (default 100000)",
            \.maxSubscriptionsPerApp, in: 1...100_000_000),
        Option.integer(
            "--rate-limit", "N", help: "calls per second each app may make (default 0: no limit)", \.rateLimit,
            in: 0...100_000_000),
        Option.integer(
            "--rate-burst", "N", help: "calls an app may make at once above its rate (default: the rate)", \.rateBurst,
            in: 0...100_000_000),
        Option.integer(
            "--wrong-password-limit", "N",
            help:
                "wrong group passwords per user and group in 15 min before joins are refused (default 5; 0: no limit)",
            \.wrongPasswordLimit, in: 0...1_000_000),
        Option.integer(
            "--shutdown-grace", "SECONDS", help: "how long a SIGTERM drain may take (default 10)",
            \.shutdownGraceSeconds, in: 0...3600),
        // Webhooks: where deliveries may go, and whom they trust besides the system's CAs.
        Option.onOff(
            "--webhook-allow-private", "",
            help: "let webhooks use http and private or loopback addresses (default off)",
            \.webhookAllowPrivate, isSwitch: true),
        Option.path(
            "--webhook-ca-file", "FILE", help: "trust these CAs (PEM) for webhook receivers, beside the system's"
        ) {
            $0.webhookCAFile = $1
        },
        // TLS on every listener: all three are files, read again on SIGHUP.
        Option.tlsFile(
            "--tls-cert", help: "serve TLS only, with this certificate chain (PEM; needs --tls-key)", \.certificateFile),
        Option.tlsFile("--tls-key", help: "the private key of --tls-cert (PEM)", \.keyFile),
        Option.tlsFile(
            "--tls-client-ca", help: "require client certificates issued by these CAs (PEM): mutual TLS", \.clientCAFile
        ),
    ]

    /// Parses `arguments` (without the program name) over `environment`.
    public static func parse(arguments: [String], environment: [String: String]) throws(ConfigurationError)
        -> ServerCommand
    {
        // The whole command line first: --help and --version need nothing else, and the config
        // file it names is applied before the variables and the flags are applied over it.
        var reader = ArgumentReader(arguments)
        var configPath: String?
        var flags: [(option: Option, value: ArgumentValue)] = []
        do throws(ArgumentError) {
            while let token = reader.next() {
                guard case .flag(let flag) = token else { throw unknownOption(token) }
                switch flag.name {
                case "--help", "-h": return .help(helpText())
                case "--version":
                    return .version("moderation-server \(ServerInfo.buildVersion) (revision \(ServerInfo.revision))")
                case "--config":
                    // The first --config wins, as the first is the one read.
                    let path = try reader.value(for: flag, placeholder: "FILE").text
                    configPath = configPath ?? path
                default:
                    guard let option = options.first(where: { $0.flag == flag.name }) else {
                        throw unknownOption(token)
                    }
                    if option.isSwitch {
                        let on = try flag.booleanValue()
                        flags.append((option, ArgumentValue(on ? "on" : "off", name: flag.spelled)))
                    } else {
                        flags.append((option, try reader.value(for: flag, placeholder: option.argument)))
                    }
                }
            }
        } catch {
            throw ConfigurationError(error.message)
        }

        var settings = ServerSettings()
        if let path = configPath ?? environment["MODERATION_CONFIG"] {
            settings.configFile = path
            try applyConfigFile(path, to: &settings)
        }
        for option in options {
            guard let text = environment[option.environmentName] else { continue }
            try apply(
                option, ArgumentValue(text, name: option.flag), to: &settings, source: option.environmentName + ": ")
        }
        var cleared: Set<String> = []
        for (option, value) in flags {
            if let clear = option.clearBeforeFlags, cleared.insert(option.flag).inserted { clear(&settings) }
            try apply(option, value, to: &settings, source: "")
        }
        if settings.store == .postgres && settings.postgresURL == nil {
            throw ConfigurationError("--store postgres needs --postgres-url URL (or MODERATION_POSTGRES_URL)")
        }
        _ = try settings.tls?.configuration()
        if settings.plaintextListen != nil && settings.tls == nil {
            throw ConfigurationError(
                "--plaintext-listen is for a server with --tls-cert: without TLS every listener speaks plaintext "
                    + "already (--grpc-listen adds a second address)")
        }
        return .run(settings)
    }

    /// Applies one option's value; an error starts with `source` (the variable, the file's line).
    private static func apply(
        _ option: Option, _ value: ArgumentValue, to settings: inout ServerSettings, source: String
    ) throws(ConfigurationError) {
        do throws(ArgumentError) {
            try option.apply(&settings, value)
        } catch {
            throw ConfigurationError(source + error.message)
        }
    }

    private static func unknownOption(_ token: ArgumentReader.Token) -> ArgumentError {
        guard case .flag(let flag) = token,
            let closest = Suggestion.offers(
                for: flag.name, among: options.map(\.flag) + ["--help", "--version", "--config"]
            ).first
        else { return ArgumentError("unknown option '\(token.argument)' (see --help)") }
        return ArgumentError("unknown option '\(token.argument)' (did you mean \(closest)?)")
    }

    /// Applies a config file: one `name = value` a line (names as the flags without `--`),
    /// `#` comments and blank lines ignored.
    static func applyConfigFile(_ path: String, to settings: inout ServerSettings) throws(ConfigurationError) {
        let text: String
        do throws(SystemError) {
            text = try FileSystem.readText(path)
        } catch {
            throw ConfigurationError("--config \(path) cannot be read: \(FileSystem.describe(errno: error.errno))")
        }
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") { continue }
            let source = "--config \(path), line \(number + 1): "
            guard let equals = line.firstIndex(of: "=") else {
                throw ConfigurationError(source + "expected name = value")
            }
            let name = line[..<equals].trimmingWhitespace()
            var value = line[line.index(after: equals)...].trimmingWhitespace()
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            guard let option = options.first(where: { $0.flag == "--" + name }) else {
                let names = options.map { String($0.flag.dropFirst(2)) }
                let hint = Suggestion.offers(for: String(name), among: names).first.map { " (did you mean \($0)?)" }
                throw ConfigurationError(source + "unknown setting '\(name)'" + (hint ?? ""))
            }
            try apply(option, ArgumentValue(value, name: option.flag), to: &settings, source: source)
        }
    }

    static func helpText() -> String {
        var lines = [
            "moderation-server \(ServerInfo.buildVersion) — the group-moderation RPC service",
            "",
            "usage: moderation-server [options]",
            "",
            "options (each also as an environment variable; a flag wins over its variable):",
        ]
        for option in options {
            let left = option.isSwitch ? "  \(option.flag)" : "  \(option.flag) \(option.argument)"
            lines.append(left.padding(to: 34) + option.help)
            lines.append(String(repeating: " ", count: 34) + "env \(option.environmentName)")
        }
        lines += [
            "  --config FILE                   settings file: one 'name = value' a line (names as the flags)",
            "                                  env MODERATION_CONFIG; flags > env > file > defaults",
            "  --help                          this text",
            "  --version                       the version",
            "",
            "Subcommand: moderation-server backup --output FILE [--data-dir DIR] (online copy of the SQLite store;",
            "the PostgreSQL store is backed up with PostgreSQL's tools: docs/OPERATIONS.md).",
            "",
            "With no API key configured, the server creates one for app 'default' in",
            "DATA_DIR/api-keys (the key is never logged). SIGTERM or SIGINT drains and exits 0;",
            "SIGHUP reloads the API keys and the TLS certificate. Without --tls-cert the listener speaks",
            "plaintext: keep it on loopback, or API keys cross the network in clear.",
        ]
        return lines.joined(separator: "\n")
    }
}

extension String {
    func padding(to width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }

    func replacingOccurrences(_ target: Character, with replacement: String) -> String {
        var out = ""
        for character in self { out += character == target ? replacement : String(character) }
        return out
    }
}
