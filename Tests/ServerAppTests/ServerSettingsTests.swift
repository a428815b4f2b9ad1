internal import Glibc
import ModerationSQLite
import RPCCore
import TestSupport
import Testing

@testable import ServerApp

@Suite("Server settings: flags, MODERATION_… variables, the config file")
struct ServerSettingsTests {
    private func settings(_ arguments: [String], _ environment: [String: String] = [:]) throws -> ServerSettings {
        guard case .run(let settings) = try ServerSettingsParser.parse(arguments: arguments, environment: environment)
        else {
            throw ConfigurationError("not a run command")
        }
        return settings
    }

    private func error(_ arguments: [String], _ environment: [String: String] = [:]) -> String? {
        do {
            _ = try ServerSettingsParser.parse(arguments: arguments, environment: environment)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func defaults() throws {
        let defaults = try settings([])
        #expect(defaults.listenAddress == "127.0.0.1:7600")
        #expect(defaults.dataDirectory == "./data")
        #expect(defaults.durability == .full)
        #expect(defaults.accessLog)
        #expect(defaults.metricsListen == nil)
    }

    @Test func precedenceIsFlagsThenEnvironmentThenFileThenDefaults() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.path + "/moderation.conf"
        try #require(
            write(
                file,
                """
                # a comment
                listen = 0.0.0.0:7000
                threads = 3
                log-format = "json"
                max-concurrent-calls = 64
                """))
        let fromFile = try settings(["--config", file])
        #expect(fromFile.listenAddress == "0.0.0.0:7000" && fromFile.threads == 3 && fromFile.logFormat == .json)
        let fromEnvironment = try settings(
            ["--config", file], ["MODERATION_THREADS": "5", "MODERATION_LISTEN": "127.0.0.1:7100"])
        #expect(
            fromEnvironment.threads == 5 && fromEnvironment.listenAddress == "127.0.0.1:7100"
                && fromEnvironment.maxConcurrentCalls == 64)
        let fromFlags = try settings(
            ["--config", file, "--threads", "7"], ["MODERATION_THREADS": "5", "MODERATION_CONFIG": "/nonexistent"])
        #expect(fromFlags.threads == 7, "a flag wins over the variable; --config wins over MODERATION_CONFIG")
        let viaVariable = try settings([], ["MODERATION_CONFIG": file])
        #expect(viaVariable.threads == 3)
    }

    @Test func repeatableKeysFromFlagsReplaceTheEnvironment() throws {
        let both = try settings(["--api-key", "a:key-aaaa1"], ["MODERATION_API_KEY": "b:key-bbbb1,c:key-cccc1"])
        #expect(both.apiKeys.map(\.appID) == ["a"])
        let environmentOnly = try settings([], ["MODERATION_API_KEY": "b:key-bbbb1,c:key-cccc1"])
        #expect(environmentOnly.apiKeys.map(\.appID) == ["b", "c"])
    }

    @Test(
        "invalid settings are refused with a message naming the setting",
        arguments: [
            (["--threads", "zero"], "--threads"),
            (["--listen", "nohost"], "--listen"),
            (["--listen", "127.0.0.1:99999"], "--listen"),
            (["--log-level", "loud"], "--log-level"),
            (["--durability", "maybe"], "--durability"),
            (["--sqlite-cache-mib", "0"], "--sqlite-cache-mib"),
            (["--api-key", "no-colon"], "--api-key"),
            (["--metrics-listen", ":9"], "--metrics-listen"),
            (["--access-log", "perhaps"], "--access-log"),
            (["--bogus"], "unknown option '--bogus'"),
            (["--threads"], "--threads needs a value"),
            (["--bogus=1"], "unknown option '--bogus=1'"),
            (["stray"], "unknown option 'stray'"),
            (["--lisen", "127.0.0.1:1"], "unknown option '--lisen' (did you mean --listen?)"),
            (["--grpc", "127.0.0.1:1"], "unknown option '--grpc' (did you mean --grpc-listen?)"),
            (["--config"], "--config needs a value: --config FILE"),
        ])
    func invalid(_ arguments: [String], _ named: String) {
        let message = error(arguments)
        #expect(message?.contains(named) == true, "\(message ?? "accepted")")
    }

    @Test("the SQLite cache size comes from the flag or MODERATION_SQLITE_CACHE_MIB; 2 MiB by default")
    func sqliteCacheSize() throws {
        #expect(try settings([]).sqliteCacheMiB == 2)
        #expect(try settings(["--sqlite-cache-mib", "8"]).sqliteCacheMiB == 8)
        #expect(try settings([], ["MODERATION_SQLITE_CACHE_MIB": "4"]).sqliteCacheMiB == 4)
    }

    @Test("--webhook-allow-private is a switch on the command line, on or off elsewhere; --webhook-ca-file a path")
    func webhookSettings() throws {
        #expect(try settings([]).webhookAllowPrivate == false)
        #expect(try settings(["--webhook-allow-private"]).webhookAllowPrivate)
        #expect(try settings(["--webhook-allow-private", "--data-dir", "/tmp/x"]).dataDirectory == "/tmp/x")
        #expect(try settings(["--webhook-allow-private=off"]).webhookAllowPrivate == false)
        #expect(try settings([], ["MODERATION_WEBHOOK_ALLOW_PRIVATE": "on"]).webhookAllowPrivate)
        #expect(
            try settings(["--webhook-allow-private=off"], ["MODERATION_WEBHOOK_ALLOW_PRIVATE": "on"])
                .webhookAllowPrivate == false)
        #expect(error(["--webhook-allow-private=maybe"]) != nil)
        #expect(try settings(["--webhook-ca-file", "/etc/hooks-ca.pem"]).webhookCAFile == "/etc/hooks-ca.pem")
        #expect(error(["--webhook-ca-file", ""])?.contains("empty") == true)
        #expect(error(["--webhook-allow-privat"])?.contains("did you mean --webhook-allow-private?") == true)
    }

    @Test func invalidEnvironmentAndFileNameTheirSource() throws {
        #expect(error([], ["MODERATION_THREADS": "-1"])?.hasPrefix("MODERATION_THREADS:") == true)
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.path + "/bad.conf"
        try #require(write(file, "threads = 2\nlisten 127.0.0.1:1\n"))
        #expect(error(["--config", file])?.contains("line 2") == true)
        try #require(write(file, "colour = blue\n"))
        #expect(error(["--config", file])?.contains("unknown setting 'colour'") == true)
        try #require(write(file, "metrics-lisen = 127.0.0.1:9600\n"))
        #expect(
            error(["--config", file])?.contains("unknown setting 'metrics-lisen' (did you mean metrics-listen?)")
                == true)
        #expect(error(["--config", directory.path + "/missing.conf"])?.contains("cannot be read") == true)
    }

    @Test(
        "--access-log takes exactly what the docs say, on or off, from a flag, a variable or the file",
        arguments: ["yes", "true", "0", "OFF", "On", ""])
    func accessLogTakesOnOrOff(_ text: String) throws {
        #expect(error(["--access-log", text]) == "--access-log: '\(text)' is not on or off")
        #expect(
            error([], ["MODERATION_ACCESS_LOG": text])
                == "MODERATION_ACCESS_LOG: --access-log: '\(text)' is not on or off")
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.path + "/moderation.conf"
        try #require(write(file, "access-log = \(text)\n"))
        #expect(error(["--config", file]) == "--config \(file), line 1: --access-log: '\(text)' is not on or off")
        #expect(try settings(["--access-log", "off"]).accessLog == false)
        #expect(try settings([], ["MODERATION_ACCESS_LOG": "on"]).accessLog == true)
    }

    @Test("a file that cannot be read says why: the system's reason")
    func unreadableFilesSayWhy() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let missing = directory.path + "/missing.conf"
        #expect(error(["--config", missing]) == "--config \(missing) cannot be read: No such file or directory")
        #expect(error(["--config", directory.path]) == "--config \(directory.path) cannot be read: Is a directory")
        #expect {
            try ServerMain.readKeysFile(missing, setting: "--api-keys-file")
        } throws: { error in
            (error as? ConfigurationError)?.message
                == "--api-keys-file \(missing) cannot be read: No such file or directory"
        }
    }

    @Test func settingsCompareByValue() throws {
        let spaced = try settings(["--durability", "normal", "--metrics-listen", "[::1]:9100"])
        #expect(try spaced == settings(["--durability=normal", "--metrics-listen=[::1]:9100"]))
        #expect(spaced.durability == .normal)
        #expect(
            try settings(["--metrics-listen", "127.0.0.1:9100"]) != settings(["--metrics-listen", "127.0.0.1:9101"]))
    }

    @Test("--help and --version answer even when a setting is bad")
    func helpBeforeSettings() throws {
        guard
            case .help = try ServerSettingsParser.parse(
                arguments: ["--threads", "0", "--help"], environment: ["MODERATION_THREADS": "x"])
        else {
            Issue.record("--help must print the help")
            return
        }
        guard
            case .version = try ServerSettingsParser.parse(
                arguments: ["--version", "--config", "/nonexistent"], environment: [:])
        else {
            Issue.record("--version must print the version")
            return
        }
    }

    @Test func helpAndVersion() throws {
        guard case .help(let text) = try ServerSettingsParser.parse(arguments: ["--help"], environment: [:]) else {
            Issue.record("--help must print the help")
            return
        }
        for flag in [
            "--listen", "--data-dir", "--api-key", "--api-keys-file", "--threads", "--max-message-bytes", "--log-level",
            "--log-format", "--metrics-listen", "--config", "MODERATION_LISTEN",
        ] {
            #expect(text.contains(flag), "help mentions \(flag)")
        }
        guard case .version(let version) = try ServerSettingsParser.parse(arguments: ["--version"], environment: [:])
        else {
            Issue.record("--version must print the version")
            return
        }
        #expect(version.hasPrefix("moderation-server 0.1.0"))
        #expect(version.contains("(revision "), "\(version)")
    }

    private func write(_ path: String, _ text: String) -> Bool {
        guard let file = fopen(path, "w") else { return false }
        defer { fclose(file) }
        return fputs(text, file) >= 0
    }
}

@Suite("API keys")
struct APIKeyStoreTests {
    @Test func bareAndQualifiedKeysAuthenticateTheirApp() {
        let store = APIKeyStore([.init(appID: "a", key: "key-aaaa1"), .init(appID: "b", key: "key-bbbb1")])
        #expect(store.authenticate(apiKey: "key-aaaa1", appID: "") == "a")
        #expect(store.authenticate(apiKey: "a:key-aaaa1", appID: "") == "a")
        #expect(store.authenticate(apiKey: "key-bbbb1", appID: "b") == "b")
        #expect(store.authenticate(apiKey: "key-bbbb1", appID: "a") == nil, "a key of another app")
        #expect(store.authenticate(apiKey: "b:key-aaaa1", appID: "") == nil, "a key qualified with the wrong app")
        #expect(store.authenticate(apiKey: "key-aaaa", appID: "") == nil, "a prefix")
        #expect(store.authenticate(apiKey: "", appID: "") == nil)
        store.replace([.init(appID: "c", key: "key-cccc1")])
        #expect(store.authenticate(apiKey: "key-aaaa1", appID: "") == nil, "replaced keys stop working")
        #expect(store.authenticate(apiKey: "key-cccc1", appID: "") == "c")
    }
}

@Suite("Per-app rate limit (token bucket)")
struct TokenBucketLimiterTests {
    @Test func burstThenRateThenRefillPerApp() {
        let limiter = TokenBucketLimiter(callsPerSecond: 10, burst: 3)
        let start: UInt64 = 1_000_000_000
        for _ in 0..<3 { #expect(limiter.retryAfter(app: "a", now: start) == nil, "the burst is allowed at once") }
        let wait = limiter.retryAfter(app: "a", now: start)
        #expect(wait == 100, "one token every 100 ms at 10 calls/s")
        #expect(limiter.retryAfter(app: "b", now: start) == nil, "another app has its own bucket")
        #expect(limiter.retryAfter(app: "a", now: start + 50_000_000) == 50, "half a token after 50 ms")
        #expect(limiter.retryAfter(app: "a", now: start + 100_000_000) == nil, "a whole token after 100 ms")
        #expect(limiter.retryAfter(app: "a", now: start + 10_000_000_000) == nil)
        for _ in 0..<2 { #expect(limiter.retryAfter(app: "a", now: start + 10_000_000_000) == nil) }
        #expect(
            limiter.retryAfter(app: "a", now: start + 10_000_000_000) != nil,
            "the bucket never holds more than the burst")
    }
}
