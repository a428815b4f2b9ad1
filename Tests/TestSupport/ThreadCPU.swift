internal import Glibc

/// This process's threads and the CPU time each has used, from /proc/self/task.
///
/// A test tells its own server's threads from other tests' by the ids that appear while it starts
/// the server, then watches one thread instead of the whole (busy, parallel) process.
public enum ThreadCPU {
    /// The id and name of every thread of the process.
    public static func threads() -> [Int32: String] {
        guard let directory = opendir("/proc/self/task") else { return [:] }
        defer { closedir(directory) }
        var threads: [Int32: String] = [:]
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let tid = Int32(name), let comm = read("/proc/self/task/\(tid)/comm") else { continue }
            threads[tid] = comm.hasSuffix("\n") ? String(comm.dropLast()) : comm
        }
        return threads
    }

    /// CPU time (user + system) thread `tid` has used, in milliseconds; nil once it has ended.
    public static func milliseconds(of tid: Int32) -> Int? {
        guard let stat = read("/proc/self/task/\(tid)/stat"), let close = stat.lastIndex(of: ")") else { return nil }
        // After "pid (comm)": state is field 3, utime 14 and stime 15 (proc(5)).
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return (user + system) * 1_000 / sysconf(Int32(_SC_CLK_TCK))
    }

    /// Ids of threads named `prefix…` that `body` started (waiting up to a second for a new thread
    /// to give itself its name).
    public static func started<R>(named prefix: String, by body: () throws -> R) rethrows -> (result: R, threads: [Int32]) {
        let before = Set(threads().keys)
        let result = try body()
        var new: [Int32] = []
        waitUntil(timeoutMs: 1_000) {
            new = threads().filter { !before.contains($0.key) && $0.value.hasPrefix(prefix) }.map(\.key)
            return !new.isEmpty
        }
        return (result, new)
    }

    private static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
        return n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : nil
    }
}
