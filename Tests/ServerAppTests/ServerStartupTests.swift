import Moderation
import RPCCore
import RPCPosix
import ServerApp
import TestSupport
import Testing

/// A server that cannot start says why in one line and keeps the error underneath as the cause.
@Suite("Server startup failures")
struct ServerStartupTests {
    static func settings(_ directory: String, port: UInt16 = 0) -> ServerSettings {
        var settings = ServerSettings()
        settings.host = "127.0.0.1"
        settings.port = port
        settings.threads = 1
        settings.dataDirectory = directory
        return settings
    }

    @Test("a store that cannot be opened: the data directory in the message, the store's error as the cause")
    func storeUnavailable() throws {
        let directory = TemporaryDirectory(prefix: "startup")
        defer { directory.remove() }
        let unusable = try directory.write([], to: "a-file") + "/data"
        do throws(ServerStartupError) {
            let server = try ModerationServer(
                settings: Self.settings(unusable), authenticator: TestKeys(), logger: .disabled)
            server.shutdown(gracePeriodMs: 0)
            Issue.record("the server opened a store under a regular file")
        } catch {
            #expect(error.message.hasPrefix("cannot open the store in --data-dir \(unusable): "))
            #expect(error.cause is ModerationError)
        }
    }

    @Test("an address in use: the address in the message, the system error as the cause")
    func addressInUse() throws {
        let firstDirectory = TemporaryDirectory(prefix: "startup")
        let secondDirectory = TemporaryDirectory(prefix: "startup")
        defer {
            firstDirectory.remove()
            secondDirectory.remove()
        }
        var tuning = ModerationServer.Tuning()
        tuning.maintenanceIntervalMs = 0
        let first = try ModerationServer(
            settings: Self.settings(firstDirectory.path), authenticator: TestKeys(), logger: .disabled, tuning: tuning)
        let port = try first.start()
        defer { first.shutdown(gracePeriodMs: 0) }
        let second = try ModerationServer(
            settings: Self.settings(secondDirectory.path, port: port), authenticator: TestKeys(), logger: .disabled,
            tuning: tuning)
        do throws(ServerStartupError) {
            try second.start()
            second.shutdown(gracePeriodMs: 0)
            Issue.record("a second server bound port \(port)")
        } catch {
            #expect(error.message.hasPrefix("cannot listen on 127.0.0.1:\(port): "))
            #expect(error.cause is SystemError)
        }
    }
}
