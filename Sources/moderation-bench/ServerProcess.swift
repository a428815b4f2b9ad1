internal import CSystemShims
internal import Glibc

/// A `moderation-server` child process for the over-the-wire benchmarks: started on port 0 with
/// a temporary data directory, its port read from the one line it prints, stopped with SIGTERM.
final class ServerProcess {
    let pid: pid_t
    let port: UInt16
    let directory: String
    let metricsPort: UInt16

    static let apiKey = "benchkey-0123456789"

    /// App `index`'s ID: app 0 is `bench`, the one every benchmark uses; others are `bench<index>`.
    static func app(_ index: Int) -> String { index == 0 ? "bench" : "bench\(index)" }

    /// App `index`'s API key.
    static func apiKey(app index: Int) -> String { index == 0 ? apiKey : "\(apiKey)-\(index)" }

    /// - Parameters:
    ///   - apps: how many apps get a key (`app(_:)`, `apiKey(app:)`).
    ///   - cpu: the one CPU the server runs on (`taskset -c`), or nil for any.
    init(executable: String, apps: Int = 1, cpu: Int? = nil, extraArguments: [String] = []) throws(BenchError) {
        var template = Array("/tmp/moderation-bench-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchError("cannot make a temporary directory") }
        directory = String(cString: made)
        metricsPort = try Self.freePort()
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { throw BenchError("pipe failed") }
        let arguments =
            [
                executable, "--listen", "127.0.0.1:0", "--grpc-listen", "127.0.0.1:0", "--data-dir",
                directory + "/data",
                "--log-level", "warning", "--access-log", "off", "--metrics-listen", "127.0.0.1:\(metricsPort)",
            ] + (0..<apps).flatMap { ["--api-key", "\(Self.app($0)):\(Self.apiKey(app: $0))"] } + extraArguments
        // taskset execs the server in place, so the child's pid is the server's.
        let command = cpu.map { ["taskset", "-c", String($0)] + arguments } ?? arguments
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
        posix_spawn_file_actions_addclose(&actions, pipeFDs[0])
        var child: pid_t = 0
        let argv = command.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let status = posix_spawnp(&child, command[0], &actions, nil, argv, environ)
        posix_spawn_file_actions_destroy(&actions)
        close(pipeFDs[1])
        guard status == 0 else { throw BenchError("cannot start \(command[0]): \(String(cString: strerror(status)))") }
        pid = child
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while read(pipeFDs[0], &byte, 1) == 1, byte != 10 { line.append(byte) }
        close(pipeFDs[0])
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("listening on "), let colon = text.lastIndex(of: ":"),
            let port = UInt16(text[text.index(after: colon)...])
        else {
            kill(child, SIGKILL)
            throw BenchError("the server did not start: '\(text)'")
        }
        self.port = port
    }

    /// A loopback port nothing listens on now (the kernel's pick), so that several servers of
    /// one benchmark get a metrics port each.
    private static func freePort() throws(BenchError) -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(fd, address, length) == 0 && getsockname(fd, address, &length) == 0
            }
        }
        guard bound else { throw BenchError("cannot pick a free port") }
        return UInt16(bigEndian: address.sin_port)
    }

    /// Resident memory of the server process, in bytes.
    var residentBytes: UInt64 {
        guard let file = fopen("/proc/\(pid)/status", "r") else { return 0 }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 256)
        while fgets(&buffer, 256, file) != nil {
            let line = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if line.hasPrefix("VmRSS:") {
                let digits = line.filter(\.isNumber)
                return (UInt64(digits) ?? 0) * 1024
            }
        }
        return 0
    }

    /// CPU time the server process has used (user + system), in seconds.
    var cpuSeconds: Double {
        guard let file = fopen("/proc/\(pid)/stat", "r") else { return 0 }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 1024)
        guard fgets(&buffer, 1024, file) != nil else { return 0 }
        let text = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let close = text.lastIndex(of: ")") else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// CPU time one of the server's threads has used (user + system), in seconds, or nil: on a
    /// shared machine, what a thread's work cost where wall-clock time also counts other
    /// processes.
    func threadCPUSeconds(named name: String) -> Double? {
        guard let tid = threadID(named: name), let stat = Self.firstLine("/proc/\(pid)/task/\(tid)/stat"),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The id of the server's thread named `name` (`/proc/PID/task/TID/comm`), or nil.
    private func threadID(named name: String) -> Int? {
        guard let tasks = opendir("/proc/\(pid)/task") else { return nil }
        defer { closedir(tasks) }
        while let entry = readdir(tasks) {
            let tid = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let id = Int(tid), Self.firstLine("/proc/\(pid)/task/\(tid)/comm") == name { return id }
        }
        return nil
    }

    /// The first line of a file, without its newline, or nil.
    private static func firstLine(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 1024)
        guard fgets(&buffer, 1024, file) != nil else { return nil }
        let line = String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return line.hasSuffix("\n") ? String(line.dropLast()) : line
    }

    /// One metric's value from /metrics (the sum of its samples), or nil.
    func metric(_ name: String) -> Double? {
        let fd = "127.0.0.1".withCString { cshim_connect($0, metricsPort, 2_000) }
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var request = "GET /metrics HTTP/1.1\r\nHost: bench\r\n\r\n"
        request.withUTF8 { _ = send(fd, $0.baseAddress, $0.count, 0) }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &chunk, chunk.count)
            if n <= 0 { break }
            response += chunk[0..<n]
        }
        var total: Double?
        for line in String(decoding: response, as: UTF8.self).split(separator: "\n") where line.hasPrefix(name) {
            let rest = line.dropFirst(name.count)
            guard rest.first == " " || rest.first == "{" else { continue }
            if let value = Double(line.split(separator: " ").last ?? "") { total = (total ?? 0) + value }
        }
        return total
    }

    func stop() {
        kill(pid, SIGTERM)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        _ = "rm -rf \(directory)".withCString { system($0) }
    }
}

/// A benchmark that could not run.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
