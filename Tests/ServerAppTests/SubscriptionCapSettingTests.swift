internal import Glibc
import TestSupport
import Testing

@testable import ServerApp

/// `--max-subscriptions-per-app`: a flag, a variable and a config-file line like every setting;
/// 100 000 by default (the fan-out benchmark runs 10 000 subscribers of one app).
@Suite("Server settings: the cap on subscriptions per app")
struct SubscriptionCapSettingTests {
    private func parse(_ arguments: [String], _ environment: [String: String] = [:]) throws -> ServerSettings {
        guard case .run(let settings) = try ServerSettingsParser.parse(arguments: arguments, environment: environment)
        else {
            throw ConfigurationError("not a run command")
        }
        return settings
    }

    @Test("from the flag, MODERATION_MAX_SUBSCRIPTIONS_PER_APP or the config file; 100 000 by default")
    func sources() throws {
        #expect(try parse([]).maxSubscriptionsPerApp == 100_000)
        #expect(try parse(["--max-subscriptions-per-app", "500"]).maxSubscriptionsPerApp == 500)
        #expect(try parse([], ["MODERATION_MAX_SUBSCRIPTIONS_PER_APP": "40"]).maxSubscriptionsPerApp == 40)
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.path + "/moderation.conf"
        let handle = try #require(fopen(file, "w"))
        fputs("max-subscriptions-per-app = 7\n", handle)
        fclose(handle)
        #expect(try parse(["--config", file]).maxSubscriptionsPerApp == 7)
        #expect(try parse(["--config", file, "--max-subscriptions-per-app", "9"]).maxSubscriptionsPerApp == 9)
    }

    @Test("a cap of 0 is refused, naming the setting")
    func zeroRefused() {
        #expect(throws: ConfigurationError.self) { try parse(["--max-subscriptions-per-app", "0"]) }
        do {
            _ = try parse(["--max-subscriptions-per-app", "0"])
        } catch {
            #expect((error as? ConfigurationError)?.message.contains("--max-subscriptions-per-app") == true)
        }
    }
}
