internal import Glibc
import RPCCore
import RPCMessages
import TestSupport
import Testing

/// The real `moderation-server` with a low RLIMIT_NOFILE (set by a shell before it execs the
/// server): connections until `accept` fails with EMFILE, then the server must neither spin nor
/// flood its log, must tell the clients it cannot take why, and must accept again once
/// descriptors are free.
@Suite("moderation-server out of file descriptors", .serialized)
struct AcceptErrorTests {
    static let descriptorLimit = 160

    /// The process's CPU time so far (user + system), in milliseconds, from /proc/PID/stat.
    static func cpuMilliseconds(of pid: Int32) throws -> Int {
        let fd = open("/proc/\(pid)/stat", O_RDONLY)
        guard fd >= 0 else { throw TestFailure("cannot read /proc/\(pid)/stat") }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4_096)
        let n = read(fd, &buffer, buffer.count)
        guard n > 0 else { throw TestFailure("empty /proc/\(pid)/stat") }
        let text = String(decoding: buffer[0..<n], as: UTF8.self)
        // Fields after the command's closing parenthesis: state is field 3; utime and stime are 14, 15.
        guard let close = text.lastIndex(of: ")") else { throw TestFailure("unexpected stat: \(text)") }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Int(fields[11]), let system = Int(fields[12]) else {
            throw TestFailure("unexpected stat: \(text)")
        }
        return (user + system) * 1_000 / sysconf(Int32(_SC_CLK_TCK))
    }

    /// Descriptors the process has open.
    static func openDescriptors(of pid: Int32) -> Int {
        guard let directory = opendir("/proc/\(pid)/fd") else { return 0 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            if entry.pointee.d_name.0 != UInt8(ascii: ".") { count += 1 }
        }
        return count
    }

    static func readLog(_ path: String) -> String {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            guard n > 0 else { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test("EMFILE: the server sheds with GOAWAY, stays idle, logs a line, and accepts again once descriptors are free")
    func outOfDescriptors() throws {
        let executable = try BuiltProducts.path(of: "moderation-server")
        let directory = TemporaryDirectory(prefix: "emfile")
        defer { directory.remove() }
        let logPath = directory.path + "/server.log"
        let server = try ChildProcess(
            executable: "/bin/sh",
            arguments: [
                "-c", "ulimit -n \(Self.descriptorLimit) && exec \"$0\" \"$@\"", executable,
                "--data-dir", directory.path + "/data", "--listen", "127.0.0.1:0", "--grpc-listen", "off",
                "--api-key", "app1:\(Frames.apiKey)",
                "--threads", "2", "--durability", "normal", "--access-log", "off",
            ], standardErrorPath: logPath)
        defer { server.send(signal: SIGKILL) }
        let line = try server.readLine(timeoutMs: 15_000)
        let port = try #require(line.split(separator: ":").last.flatMap { UInt16($0) }, "printed: \(line)")
        let base = Self.openDescriptors(of: server.pid)
        try #require(base < Self.descriptorLimit - 20, "the server uses \(base) descriptors at rest")

        // Connections until one is refused: the server has run out of descriptors.
        var served: [RawConnection] = []
        var refusal: Status?
        while refusal == nil {
            try #require(served.count < Self.descriptorLimit, "no connection was refused")
            let raw = try RawConnection(port: port)
            try raw.send(Frames.opening())
            let frame = try raw.expectFrame(timeoutMs: 5_000)
            if frame.type == .helloAck {
                served.append(raw)
            } else {
                refusal = try frame.goaway().status
            }
        }
        #expect(refusal?.errorCode == RuntimeErrorCode.tooManyConnections.name)
        #expect(refusal?.message.contains("file descriptors") == true, "\(refusal?.message ?? "")")

        // For a second, new connections keep coming while none can be taken: the loops must not spin.
        let cpuBefore = try Self.cpuMilliseconds(of: server.pid)
        let started = Clock.nowMs
        var turnedAway = 0
        while Clock.nowMs - started < 1_000 {
            let raw = try RawConnection(port: port)
            if (try? raw.expectClose(timeoutMs: 2_000)) != nil { turnedAway += 1 }
            usleep(20_000)
        }
        let used = try Self.cpuMilliseconds(of: server.pid) - cpuBefore
        let elapsed = Clock.nowMs - started
        let log = Self.readLog(logPath)
        let acceptLines = log.split(separator: "\n").filter { $0.contains("cannot accept") }.count
        print(
            "EMFILE: \(served.count) connections served at \(Self.descriptorLimit) descriptors; \(turnedAway) turned "
                + "away; the server used \(used) ms of CPU in \(elapsed) ms; \(acceptLines) log lines about accept")
        #expect(turnedAway > 10, "connections that cannot be served are closed, not left waiting")
        #expect(used < elapsed / 4, "the server used \(used) ms of CPU in \(elapsed) ms while it could accept nothing")
        #expect(acceptLines >= 1 && acceptLines <= 3, "\(acceptLines) lines about accept failures")

        // Free some descriptors: a fresh client is served again.
        for raw in served.suffix(5) { raw.close() }
        served.removeLast(5)
        let echoed = waitUntil(timeoutMs: 5_000, pollMs: 50) {
            guard let raw = try? RawConnection(port: port), (try? raw.handshake()) != nil,
                let reply = try? raw.roundTrip(Frames.echo(streamID: 1, [4, 2]), streamID: 1)
            else { return false }
            return (try? reply.replyError()) == .some(nil)
        }
        #expect(echoed, "a fresh connection is served once descriptors are free")
        withExtendedLifetime(served) {}
    }
}
