public import RPCCore
internal import ModerationSQLite

/// Everything the server can be told at start, from flags or `MODERATION_…` environment
/// variables (a flag wins over its variable; both win over the default).
public struct ServerSettings: Sendable, Equatable {
    public var host = "127.0.0.1"
    public var port: UInt16 = 7600
    public var dataDirectory = "./data"
    public var apiKeys: [APIKeyStore.Entry] = []
    public var apiKeysFile: String?
    /// Event loops; 0 means one per usable core.
    public var threads = 0
    public var maxMessageBytes = 4 * 1024 * 1024
    public var logLevel = Logger.Level.info
    public var logFormat = Logger.Format.text
    /// Seconds a SIGTERM drain may take before remaining streams and connections are cut.
    public var shutdownGraceSeconds = 10
    /// "full": no reply says OK before its commit is flushed to disk (the default); "normal":
    /// commits survive a crash of the process but the last ones may be lost on power loss.
    public var durability = "full"
    /// SQLite's page cache per connection, in MiB (the store has 17 connections: 16 readers and
    /// the writer; each fills its cache only as far as it meets new pages).
    public var sqliteCacheMiB = SQLiteStoreOptions.defaultCacheSizeKiB / 1024
    /// Hours the action log keeps actions (the event stream can resume that far back).
    public var retentionHours = 168
    /// Where Prometheus scrapes `/metrics`; nil for no metrics listener.
    public var metricsListen: (host: String, port: UInt16)?
    /// One info line per call (method, status, duration, app, acting user, request id).
    public var accessLog = true
    /// Connections beyond this are closed at once.
    public var maxConnections = 100_000
    /// Calls in flight per connection (advertised in HELLO_ACK).
    public var maxConcurrentCalls = 1024
    /// Calls per second each app may make on average (0: no limit), and the burst above it.
    public var rateLimit = 0
    public var rateBurst = 0
    /// The config file read at start (`--config`), if any.
    public var configFile: String?
    /// Wrong passwords a user may try on one group in 15 minutes before its joins are refused.
    public var wrongPasswordLimit = 5

    public static func == (a: ServerSettings, b: ServerSettings) -> Bool {
        a.host == b.host && a.port == b.port && a.dataDirectory == b.dataDirectory && a.apiKeys == b.apiKeys
            && a.apiKeysFile == b.apiKeysFile && a.threads == b.threads && a.maxMessageBytes == b.maxMessageBytes
            && a.logLevel == b.logLevel && a.logFormat == b.logFormat && a.shutdownGraceSeconds == b.shutdownGraceSeconds
            && a.durability == b.durability && a.sqliteCacheMiB == b.sqliteCacheMiB && a.retentionHours == b.retentionHours
            && a.metricsListen?.host == b.metricsListen?.host && a.metricsListen?.port == b.metricsListen?.port
            && a.accessLog == b.accessLog && a.maxConnections == b.maxConnections && a.maxConcurrentCalls == b.maxConcurrentCalls
            && a.rateLimit == b.rateLimit && a.rateBurst == b.rateBurst && a.configFile == b.configFile
            && a.wrongPasswordLimit == b.wrongPasswordLimit
    }

    public init() {}

    /// "HOST:PORT" as given to `--listen`.
    public var listenAddress: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// A setting that could not be used; the message names it.
public struct ConfigurationError: Error, Equatable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

/// What the command line asks for.
public enum ServerCommand: Equatable {
    case run(ServerSettings)
    case help(String)
    case version(String)
}

/// Reads flags and environment variables into `ServerSettings`.
public enum ServerSettingsParser {
    /// One option: its flag, its environment variable, its help, and how it changes the settings.
    struct Option: Sendable {
        let flag: String
        let argument: String
        let help: String
        let repeatable: Bool
        let apply: @Sendable (inout ServerSettings, String) throws(ConfigurationError) -> Void

        var environmentName: String {
            "MODERATION_" + flag.dropFirst(2).uppercased().replacingOccurrences("-", with: "_")
        }
    }

    static let options: [Option] = [
        Option(flag: "--listen", argument: "HOST:PORT", help: "address to listen on (default 127.0.0.1:7600)", repeatable: false) { settings, value throws(ConfigurationError) in
            (settings.host, settings.port) = try parseListen(value)
        },
        Option(flag: "--data-dir", argument: "PATH", help: "directory of the embedded SQLite store (default ./data)", repeatable: false) { settings, value throws(ConfigurationError) in
            guard !value.isEmpty else { throw ConfigurationError("--data-dir: the path is empty") }
            settings.dataDirectory = value
        },
        Option(flag: "--api-key", argument: "APP_ID:KEY", help: "an accepted API key (repeatable; env: comma-separated)", repeatable: true) { settings, value throws(ConfigurationError) in
            for item in value.split(separator: ",").map(String.init) where !item.isEmpty {
                guard let entry = APIKeyStore.parseEntry(item) else {
                    throw ConfigurationError("--api-key: expected APP_ID:KEY with an app id of [A-Za-z0-9_.-] and a key of at least 8 characters without spaces")
                }
                settings.apiKeys.append(entry)
            }
        },
        Option(flag: "--api-keys-file", argument: "PATH", help: "file of API keys, one APP_ID:KEY a line (# comments)", repeatable: false) { settings, value throws(ConfigurationError) in
            settings.apiKeysFile = value
        },
        Option(flag: "--threads", argument: "N", help: "event loops (default: one per usable core)", repeatable: false) { settings, value throws(ConfigurationError) in
            settings.threads = try parseInt(value, flag: "--threads", range: 1...256)
        },
        Option(flag: "--max-message-bytes", argument: "N", help: "largest message body accepted or sent (default 4194304)", repeatable: false) { settings, value throws(ConfigurationError) in
            settings.maxMessageBytes = try parseInt(value, flag: "--max-message-bytes", range: 1024...(256 * 1024 * 1024))
        },
        Option(flag: "--log-level", argument: "LEVEL", help: "trace, debug, info, notice, warning or error (default info)", repeatable: false) { settings, value throws(ConfigurationError) in
            guard let level = Logger.Level(name: value) else {
                throw ConfigurationError("--log-level: '\(value)' is not one of trace, debug, info, notice, warning, error")
            }
            settings.logLevel = level
        },
        Option(flag: "--log-format", argument: "FORMAT", help: "text or json (default text)", repeatable: false) { settings, value throws(ConfigurationError) in
            guard let format = Logger.Format(rawValue: value) else {
                throw ConfigurationError("--log-format: '\(value)' is not one of text, json")
            }
            settings.logFormat = format
        },
        Option(flag: "--durability", argument: "MODE", help: "full (fsync before OK, default) or normal (no fsync per commit)", repeatable: false) { settings, value throws(ConfigurationError) in
            guard value == "full" || value == "normal" else {
                throw ConfigurationError("--durability: '\(value)' is not one of full, normal")
            }
            settings.durability = value
        },
        Option(flag: "--sqlite-cache-mib", argument: "MIB", help: "SQLite page cache per connection, 17 connections (default 2)", repeatable: false) { settings, value throws(ConfigurationError) in
            settings.sqliteCacheMiB = try parseInt(value, flag: "--sqlite-cache-mib", range: 1...65_536)
        },
        Option(flag: "--retention-hours", argument: "HOURS", help: "how long the action log keeps actions (default 168)", repeatable: false) { settings, value throws(ConfigurationError) in
            settings.retentionHours = try parseInt(value, flag: "--retention-hours", range: 1...(24 * 3650))
        },
        Option(flag: "--metrics-listen", argument: "HOST:PORT", help: "serve Prometheus metrics on http://HOST:PORT/metrics (default off)", repeatable: false) { settings, value throws(ConfigurationError) in
            let (host, port) = try parseListen(value, flag: "--metrics-listen")
            settings.metricsListen = (host, port)
        },
        Option(flag: "--access-log", argument: "on|off", help: "one info line per call (default on)", repeatable: false) { settings, value throws(ConfigurationError) in
            settings.accessLog = try parseSwitch(value, flag: "--access-log")
        },
        Option(flag: "--max-connections", argument: "N", help: "connections beyond N are closed at once (default 100000)", repeatable: false) { settings, value throws(ConfigurationError) in
            settings.maxConnections = try parseInt(value, flag: "--max-connections", range: 1...10_000_000)
        },
        Option(flag: "--max-concurrent-calls", argument: "N", help: "calls in flight per connection (default 1024)", repeatable: false) { settings, value throws(ConfigurationError) in
            settings.maxConcurrentCalls = try parseInt(value, flag: "--max-concurrent-calls", range: 1...1_000_000)
        },
        Option(flag: "--rate-limit", argument: "N", help: "calls per second each app may make (default 0: no limit)", repeatable: false) { settings, value throws(ConfigurationError) in
            settings.rateLimit = try parseInt(value, flag: "--rate-limit", range: 0...100_000_000)
        },
        Option(flag: "--rate-burst", argument: "N", help: "calls an app may make at once above its rate (default: the rate)", repeatable: false) { settings, value throws(ConfigurationError) in
            settings.rateBurst = try parseInt(value, flag: "--rate-burst", range: 0...100_000_000)
        },
        Option(flag: "--wrong-password-limit", argument: "N", help: "wrong group passwords per user and group in 15 min before joins are refused (default 5; 0: no limit)", repeatable: false) { settings, value throws(ConfigurationError) in
            settings.wrongPasswordLimit = try parseInt(value, flag: "--wrong-password-limit", range: 0...1_000_000)
        },
        Option(flag: "--shutdown-grace", argument: "SECONDS", help: "how long a SIGTERM drain may take (default 10)", repeatable: false) { settings, value throws(ConfigurationError) in
            settings.shutdownGraceSeconds = try parseInt(value, flag: "--shutdown-grace", range: 0...3600)
        },
    ]

    /// Parses `arguments` (without the program name) over `environment`.
    public static func parse(arguments: [String], environment: [String: String]) throws(ConfigurationError) -> ServerCommand {
        var settings = ServerSettings()
        // Precedence: flags, then MODERATION_… variables, then the config file, then defaults.
        if let path = configPath(arguments: arguments, environment: environment) {
            settings.configFile = path
            try applyConfigFile(path, to: &settings)
        }
        for option in options {
            if let value = environment[option.environmentName] {
                do {
                    try option.apply(&settings, value)
                } catch {
                    throw ConfigurationError("\(option.environmentName): \(error.message)")
                }
            }
        }
        var fromFlags: Set<String> = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--help" || argument == "-h" { return .help(helpText()) }
            if argument == "--version" { return .version("moderation-server \(ServerInfo.version)") }
            if argument == "--config" {
                index += 1  // read before the environment and flags
                continue
            }
            if argument.hasPrefix("--config=") { continue }
            var name = argument, inlineValue: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            guard let option = options.first(where: { $0.flag == name }) else {
                throw ConfigurationError("unknown option '\(argument)' (see --help)")
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else {
                guard index < arguments.count else { throw ConfigurationError("\(name) needs a value: \(name) \(option.argument)") }
                value = arguments[index]
                index += 1
            }
            if option.repeatable && !fromFlags.contains(name) {
                // Flags replace what the environment gave for a repeatable option.
                if name == "--api-key" { settings.apiKeys = [] }
            }
            fromFlags.insert(name)
            try option.apply(&settings, value)
        }
        return .run(settings)
    }

    /// The `--config` path, from the flags or MODERATION_CONFIG.
    static func configPath(arguments: [String], environment: [String: String]) -> String? {
        for (index, argument) in arguments.enumerated() {
            if argument == "--config", index + 1 < arguments.count { return arguments[index + 1] }
            if argument.hasPrefix("--config=") { return String(argument.dropFirst("--config=".count)) }
        }
        return environment["MODERATION_CONFIG"]
    }

    /// Applies a config file: one `name = value` a line (names as the flags without `--`),
    /// `#` comments and blank lines ignored.
    static func applyConfigFile(_ path: String, to settings: inout ServerSettings) throws(ConfigurationError) {
        guard let text = FileSystem.readText(path) else { throw ConfigurationError("--config \(path) cannot be read") }
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw ConfigurationError("--config \(path), line \(number + 1): expected name = value")
            }
            let name = line[..<equals].trimmingWhitespace()
            var value = line[line.index(after: equals)...].trimmingWhitespace()
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            guard let option = options.first(where: { $0.flag == "--" + name }) else {
                throw ConfigurationError("--config \(path), line \(number + 1): unknown setting '\(name)'")
            }
            do {
                try option.apply(&settings, value)
            } catch {
                throw ConfigurationError("--config \(path), line \(number + 1): \(error.message)")
            }
        }
    }

    static func helpText() -> String {
        var lines = [
            "moderation-server \(ServerInfo.version) — the group-moderation RPC service",
            "",
            "usage: moderation-server [options]",
            "",
            "options (each also as an environment variable; a flag wins over its variable):",
        ]
        for option in options {
            let left = "  \(option.flag) \(option.argument)"
            lines.append(left.padding(to: 34) + option.help)
            lines.append(String(repeating: " ", count: 34) + "env \(option.environmentName)")
        }
        lines += [
            "  --config FILE                   settings file: one 'name = value' a line (names as the flags)",
            "                                  env MODERATION_CONFIG; flags > env > file > defaults",
            "  --help                          this text",
            "  --version                       the version",
            "",
            "Subcommand: moderation-server backup --output FILE [--data-dir DIR] (online copy of the store).",
            "",
            "With no API key configured, the server creates one for app 'default' in",
            "DATA_DIR/api-keys (the key is never logged). SIGTERM or SIGINT drains and exits 0;",
            "SIGHUP reloads the API keys.",
        ]
        return lines.joined(separator: "\n")
    }

    static func parseSwitch(_ value: String, flag: String) throws(ConfigurationError) -> Bool {
        switch value.lowercased() {
        case "on", "true", "yes", "1": return true
        case "off", "false", "no", "0": return false
        default: throw ConfigurationError("\(flag): '\(value)' is not on or off")
        }
    }

    static func parseListen(_ value: String, flag: String = "--listen") throws(ConfigurationError) -> (String, UInt16) {
        var host: Substring, portText: Substring
        if value.hasPrefix("["), let close = value.firstIndex(of: "]") {
            host = value[value.index(after: value.startIndex)..<close]
            let rest = value[value.index(after: close)...]
            guard rest.hasPrefix(":") else { throw ConfigurationError("\(flag): expected [HOST]:PORT, got '\(value)'") }
            portText = rest.dropFirst()
        } else {
            guard let colon = value.lastIndex(of: ":") else { throw ConfigurationError("\(flag): expected HOST:PORT, got '\(value)'") }
            host = value[..<colon]
            portText = value[value.index(after: colon)...]
        }
        guard !host.isEmpty else { throw ConfigurationError("\(flag): the host is empty in '\(value)'") }
        guard let port = UInt16(portText) else { throw ConfigurationError("\(flag): '\(portText)' is not a port (0–65535)") }
        return (String(host), port)
    }

    static func parseInt(_ value: String, flag: String, range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        guard let number = Int(value), range.contains(number) else {
            throw ConfigurationError("\(flag): '\(value)' is not a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }
}

/// The server's name and version, as HELLO_ACK and --version report them.
public enum ServerInfo {
    public static let name = "moderation-server"
    public static let version = "0.1.0"
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
