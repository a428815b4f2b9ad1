internal import Glibc
import Moderation
import ModerationSQLite
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
            #expect(error.message.hasSuffix("; give --listen another HOST:PORT"), "\(error.message)")
            #expect(error.message.ranges(of: "listen on").count == 1, "once: \(error.message)")
            #expect(error.cause is SystemError)
        }
    }

    @Test("the binary on a busy port, either listener: 'cannot listen on' once, the flag to change, exit 1")
    func busyPortFromTheCommandLine() throws {
        let directory = TemporaryDirectory(prefix: "startup")
        defer { directory.remove() }
        let executable = try BuiltProducts.path(of: "moderation-server")
        let first = try ServerProcess(
            executable: executable,
            arguments: [
                "--data-dir", directory.path + "/first", "--api-key", "app1:key-of-app-one", "--durability", "normal",
            ],
            logPath: directory.path + "/first.log")
        let busy = "127.0.0.1:\(first.port)"
        for (flag, name, advice) in [
            ("--listen", busy, "; give --listen another HOST:PORT"),
            ("--grpc-listen", "\(busy) (--grpc-listen)", "; give --grpc-listen another HOST:PORT, or off"),
        ] {
            let other = flag == "--listen" ? "--grpc-listen" : "--listen"
            let second = try ChildProcess(
                executable: executable,
                arguments: [
                    flag, busy, other, "127.0.0.1:0", "--data-dir", directory.path + "/second", "--api-key",
                    "app1:key-of-app-one",
                ])
            let outcome = try second.finish(timeoutMs: 15_000)
            #expect(outcome.exitCode == 1, "\(outcome)")
            #expect(
                outcome.standardError.contains("cannot listen on \(name): Address already in use (errno 98)\(advice)"),
                "\(outcome)")
            #expect(outcome.standardError.ranges(of: "listen on").count == 1, "once: \(outcome)")
        }
    }

    @Test("a start that fails leaves nothing behind: no new data directory, no key file or store in an old one")
    func failedStartLeavesNothing() throws {
        let directory = TemporaryDirectory(prefix: "startup")
        defer { directory.remove() }
        let executable = try BuiltProducts.path(of: "moderation-server")
        let first = try ServerProcess(
            executable: executable,
            arguments: ["--data-dir", directory.path + "/first", "--api-key", "app1:key-of-app-one"],
            logPath: directory.path + "/first.log")
        let existing = directory.path + "/existing"
        #expect(mkdir(existing, 0o755) == 0)
        #expect(close(open(existing + "/kept", O_CREAT | O_WRONLY, 0o600)) == 0)
        for data in [directory.path + "/new/data", existing] {
            // No --api-key: the start makes the default key file, then cannot listen.
            let second = try ChildProcess(
                executable: executable, arguments: ["--listen", "127.0.0.1:\(first.port)", "--data-dir", data])
            let outcome = try second.finish(timeoutMs: 15_000)
            #expect(outcome.exitCode == 1, "\(outcome)")
            #expect(outcome.standardError.contains("cannot listen on"), "\(outcome)")
        }
        #expect(access(directory.path + "/new", F_OK) != 0, "the new data directory and its parent are gone")
        #expect(Self.entries(existing) == ["kept"], "only what was there before")
    }

    static func entries(_ path: String) -> [String] {
        guard let stream = opendir(path) else { return [] }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    @Test("a second server on a data directory in use exits 1 naming the holder's pid; backup still reads")
    func dataDirectoryInUse() throws {
        let directory = TemporaryDirectory(prefix: "startup")
        defer { directory.remove() }
        let executable = try BuiltProducts.path(of: "moderation-server")
        let data = directory.path + "/data"
        let arguments = ["--data-dir", data, "--api-key", "app1:key-of-app-one", "--durability", "normal"]
        let first = try ServerProcess(
            executable: executable, arguments: arguments, logPath: directory.path + "/first.log")

        let second = try ChildProcess(
            executable: executable, arguments: ["--listen", "127.0.0.1:0", "--grpc-listen", "127.0.0.1:0"] + arguments)
        let outcome = try second.finish(timeoutMs: 15_000)
        #expect(outcome.exitCode == 1, "\(outcome)")
        #expect(!outcome.standardOutput.contains("listening on"), "\(outcome)")
        #expect(
            outcome.standardError.contains(
                "cannot open the store in --data-dir \(data): the store is open in process \(first.pid) "
                    + "(moderation-server), which holds the lock \(data)/\(DataDirectoryLock.fileName); "
                    + "stop that process first"), "\(outcome)")

        do throws(ServerStartupError) {
            let server = try ModerationServer(
                settings: Self.settings(data), authenticator: TestKeys(), logger: .disabled)
            server.shutdown(gracePeriodMs: 0)
            Issue.record("an in-process server opened \(data) while process \(first.pid) had it open")
        } catch {
            #expect(error.message.hasPrefix("cannot open the store in --data-dir \(data): "))
            #expect(error.message.contains("process \(first.pid)"))
            #expect((error.cause as? ModerationError)?.details[DataDirectoryLock.holderDetail] == "\(first.pid)")
        }

        let backup = try ChildProcess(
            executable: executable, arguments: ["backup", "--data-dir", data, "--output", directory.path + "/copy"])
        let backedUp = try backup.finish(timeoutMs: 15_000)
        #expect(backedUp.exitCode == 0, "\(backedUp)")
    }

    @Test("the lock is free again once its holder is SIGKILLed, or stops, or closes the store")
    func dataDirectoryFreed() throws {
        let directory = TemporaryDirectory(prefix: "startup")
        defer { directory.remove() }
        let executable = try BuiltProducts.path(of: "moderation-server")
        let data = directory.path + "/data"
        let arguments = ["--data-dir", data, "--api-key", "app1:key-of-app-one", "--durability", "normal"]
        let lockFile = "data/" + DataDirectoryLock.fileName

        let killed = try ServerProcess(
            executable: executable, arguments: arguments, logPath: directory.path + "/server.log")
        let status = try killed.kill(SIGKILL)
        #expect(status & 0x7F == SIGKILL)
        // The file outlives its holder; only the flock went with it.
        #expect(try directory.read(lockFile) == "\(killed.pid)\n")
        let inProcess = try ModerationServer(
            settings: Self.settings(data), authenticator: TestKeys(), logger: .disabled)
        #expect(try directory.read(lockFile) == "\(getpid())\n")
        inProcess.shutdown(gracePeriodMs: 0)

        let stopped = try ServerProcess(
            executable: executable, arguments: arguments, logPath: directory.path + "/server.log")
        #expect(try stopped.kill(SIGTERM) == 0)
        let again = try ModerationServer(settings: Self.settings(data), authenticator: TestKeys(), logger: .disabled)
        again.shutdown(gracePeriodMs: 0)
    }
}
