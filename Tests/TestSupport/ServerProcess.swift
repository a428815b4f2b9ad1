internal import Glibc

/// The `moderation-server` executable that `swift build` produced, run as a child process: the
/// test reads the port it prints, talks to it over sockets, and may kill it with any signal.
/// Killed with SIGKILL if still running when released.
public final class ServerProcess {
    public let pid: Int32
    public let port: UInt16
    /// The first line of standard output, which says the server listens.
    public let readinessLine: String
    private var exited = false

    /// The package's root directory (this file is Tests/TestSupport/ServerProcess.swift in it).
    public static let packageRoot: String = {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }()

    /// The debug build of the server.
    public static let debugExecutable = packageRoot + "/.build/debug/moderation-server"

    /// Starts `executable` with `arguments` plus `--listen 127.0.0.1:0` (and `--grpc-listen
    /// 127.0.0.1:0` unless `arguments` name one), its standard error
    /// appended to `logPath`, and waits for the "listening on HOST:PORT" line.
    /// - Throws: `TestFailure` when the executable is missing or does not start listening in time.
    public init(
        executable: String = ServerProcess.debugExecutable, arguments: [String], logPath: String,
        timeoutMs: Int = 15_000
    ) throws {
        guard access(executable, X_OK) == 0 else {
            throw TestFailure("\(executable) is missing: build it first (swift build)")
        }
        var fromChild: [Int32] = [0, 0]
        guard pipe(&fromChild) == 0 else { throw TestFailure("pipe: \(String(cString: strerror(errno)))") }
        _ = fcntl(fromChild[0], F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        posix_spawn_file_actions_addclose(&actions, fromChild[1])
        posix_spawn_file_actions_addopen(&actions, 2, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        // The gRPC listener on a port of its own too (its default, 7601, would be shared by every
        // server a test run starts), unless the caller chose.
        let grpc = arguments.contains("--grpc-listen") ? [] : ["--grpc-listen", "127.0.0.1:0"]
        let all = [executable, "--listen", "127.0.0.1:0"] + grpc + arguments
        var argv: [UnsafeMutablePointer<CChar>?] = all.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, nil, &argv, environ)
        close(fromChild[1])
        guard spawned == 0 else {
            close(fromChild[0])
            throw TestFailure("posix_spawn \(executable): \(String(cString: strerror(spawned)))")
        }
        self.pid = pid
        defer { close(fromChild[0]) }
        // The first line on standard output names the bound address.
        var line: [UInt8] = []
        let deadline = Clock.nowMs + timeoutMs
        while !line.contains(0x0A) {
            let left = deadline - Clock.nowMs
            var poller = pollfd(fd: fromChild[0], events: Int16(POLLIN), revents: 0)
            guard left > 0, poll(&poller, 1, Int32(left)) > 0 else {
                Glibc.kill(pid, SIGKILL)
                throw TestFailure("moderation-server printed no address within \(timeoutMs) ms; see \(logPath)")
            }
            var chunk = [UInt8](repeating: 0, count: 512)
            let n = chunk.withUnsafeMutableBytes { read(fromChild[0], $0.baseAddress!, $0.count) }
            guard n > 0 else {
                Glibc.kill(pid, SIGKILL)
                throw TestFailure("moderation-server exited before listening; see \(logPath)")
            }
            line += chunk[0..<n]
        }
        let text = String(decoding: line.prefix { $0 != 0x0A }, as: UTF8.self)
        guard let port = Self.listeningPort(text) else {
            Glibc.kill(pid, SIGKILL)
            throw TestFailure("moderation-server printed \"\(text)\" instead of its address")
        }
        readinessLine = text
        self.port = port
    }

    /// The port of the readiness line: `listening on HOST:PORT`, or in JSON mode an object whose
    /// message says so.
    static func listeningPort(_ line: String) -> UInt16? {
        if line.hasPrefix("{") {
            guard let json = try? JSON(parsing: line), let message = json["msg"].string else { return nil }
            return listeningPort(message)
        }
        guard line.hasPrefix("listening on "), let colon = line.lastIndex(of: ":") else { return nil }
        return UInt16(line[line.index(after: colon)...])
    }

    deinit {
        if !exited { _ = try? kill(SIGKILL) }
    }

    /// Sends `signal` and waits for the process to end; returns its wait status.
    @discardableResult
    public func kill(_ signal: Int32, timeoutMs: Int = 15_000) throws -> Int32 {
        guard !exited else { return 0 }
        Glibc.kill(pid, signal)
        let deadline = Clock.nowMs + timeoutMs
        var status: Int32 = 0
        while true {
            if waitpid(pid, &status, WNOHANG) == pid {
                exited = true
                return status
            }
            guard Clock.nowMs < deadline else {
                throw TestFailure("moderation-server still running \(timeoutMs) ms after signal \(signal)")
            }
            usleep(2_000)
        }
    }
}
