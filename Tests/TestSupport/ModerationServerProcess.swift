internal import Glibc
internal import RPCPosix

/// The real `moderation-server` as a child process: a fresh data directory, a port chosen by the
/// kernel, one API key, its log in a file. For tests of tools that talk to it as users do.
///
/// Call `stop()` when done (SIGTERM, as an operator would); a server still running when released
/// is killed. The data directory is removed either way.
public final class ModerationServerProcess {
    /// The app of `apiKey`.
    public static let appID = "probeapp"
    /// The one key the server accepts.
    public static let apiKey = "probe-test-key-1"

    /// "127.0.0.1:PORT".
    public let address: String
    public let port: UInt16
    /// "127.0.0.1:PORT" of the gRPC listener, from the "server started" log line (`grpc_listen=`);
    /// nil when the arguments turned it off.
    public let grpcAddress: String?
    public let dataDirectory: TemporaryDirectory
    private let process: ChildProcess

    /// Starts the server and waits until it listens.
    /// - Parameter arguments: more server flags (e.g. `--max-message-bytes`).
    /// - Throws: `TestFailure` when it is not built, does not start, or does not listen within 15 s.
    public init(arguments: [String] = []) throws {
        let executable = try BuiltProducts.path(of: "moderation-server")
        let directory = TemporaryDirectory(prefix: "probe-server")
        let all =
            [
                "--data-dir", directory.path + "/data", "--listen", "127.0.0.1:0", "--grpc-listen", "127.0.0.1:0",
                "--api-key", "\(Self.appID):\(Self.apiKey)", "--threads", "1", "--durability", "normal",
            ] + arguments
        let process: ChildProcess
        do {
            process = try ChildProcess(
                executable: executable, arguments: all, standardErrorPath: directory.path + "/server.log")
        } catch {
            directory.remove()
            throw error
        }
        let line: String
        do {
            line = try process.readLine(timeoutMs: 15_000)
        } catch {
            let log = Self.read(directory.path + "/server.log")
            directory.remove()
            throw TestFailure("moderation-server did not start: \(error); its log:\n\(log)")
        }
        guard line.hasPrefix("listening on "), let colon = line.lastIndex(of: ":"),
            let port = UInt16(line[line.index(after: colon)...])
        else {
            directory.remove()
            throw TestFailure("moderation-server printed '\(line)' instead of 'listening on HOST:PORT'")
        }
        // The gRPC listener's port is only in the log, written just after the line above.
        var grpc: String??
        let deadline = monotonicNow() + 15_000_000_000
        while grpc == nil && monotonicNow() < deadline {
            let log = Self.read(directory.path + "/server.log")
            let fields = log.split { $0 == " " || $0 == "\n" }
            if let field = fields.first(where: { $0.hasPrefix("grpc_listen=") }) {
                let value = field.dropFirst("grpc_listen=".count)
                grpc = .some(value == "off" ? nil : String(value))
            } else {
                usleep(10_000)
            }
        }
        guard let grpc else {
            process.send(signal: SIGKILL)
            directory.remove()
            throw TestFailure("moderation-server logged no grpc_listen= within 15 s")
        }
        self.process = process
        self.port = port
        grpcAddress = grpc
        dataDirectory = directory
        address = "127.0.0.1:\(port)"
    }

    deinit {
        process.send(signal: SIGKILL)
        dataDirectory.remove()
    }

    /// Sends `signal` (SIGHUP: reload the API keys and the TLS certificate).
    public func send(signal: Int32) {
        process.send(signal: signal)
    }

    /// Stops the server with SIGTERM and waits for it.
    /// - Returns: its exit code (0 after a clean drain).
    @discardableResult
    public func stop(timeoutMs: Int = 15_000) throws -> Int32 {
        process.send(signal: SIGTERM)
        return try process.finish(timeoutMs: timeoutMs).exitCode
    }

    /// What the server has logged so far (for failure messages).
    public var log: String { Self.read(dataDirectory.path + "/server.log") }

    private static func read(_ path: String) -> String {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return "(no log)" }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            guard n > 0 else { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
