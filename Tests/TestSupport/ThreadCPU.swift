internal import Glibc

/// This process's threads and the CPU time each has used, from /proc/self/task.
///
/// A test learns which thread serves it (a handler records `currentThreadID()`), then watches that
/// one thread instead of the whole process, where other tests run in parallel.
public enum ThreadCPU {
    /// The id and name of every thread of the process.
    public static func threads() -> [Int32: String] {
        guard let directory = opendir("/proc/self/task") else { return [:] }
        defer { closedir(directory) }
        var threads: [Int32: String] = [:]
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
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

    /// The id of the calling thread (from /proc/thread-self), e.g. recorded by a handler to learn
    /// which event-loop thread serves a connection.
    public static func currentThreadID() -> Int32? {
        var target = [CChar](repeating: 0, count: 64)
        let n = readlink("/proc/thread-self", &target, target.count - 1)
        guard n > 0 else { return nil }
        let text = String(decoding: target[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) // "<pid>/task/<tid>"
        return text.split(separator: "/").last.flatMap { Int32($0) }
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
