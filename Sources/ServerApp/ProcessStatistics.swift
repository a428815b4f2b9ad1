internal import Glibc

/// The process's CPU time, start time, descriptors and memory, read from `/proc` as Prometheus'
/// official clients read them (client_golang's process collector through procfs, the Python
/// client's `ProcessCollector`), so the `process_…` series mean here what they mean everywhere.
///
/// Read at each scrape on the metrics endpoint's own thread, never on an event loop: a few small
/// files and one directory listing, well under a millisecond.
struct ProcessStatistics: Equatable {
    /// User plus system CPU time, in seconds.
    var cpuSeconds: Double
    /// When the process started, in seconds since the Unix epoch.
    var startTimeSeconds: Double
    /// Open file descriptors (the entries of `/proc/self/fd`).
    var openFDs: Int
    /// The soft limit on open descriptors (`RLIMIT_NOFILE`).
    var maxFDs: UInt64
    /// The size of the address space.
    var virtualMemoryBytes: UInt64
    /// The soft limit on the address space (`RLIMIT_AS`); `UInt64.max` when unlimited, as
    /// client_golang reports it (procfs reads "unlimited" as the largest 64-bit value).
    var virtualMemoryMaxBytes: UInt64

    /// The process's statistics now, or nil when `/proc` cannot be read (not Linux, or mounted
    /// without it): the `process_…` series are then left out, as the official clients do.
    static func current() -> ProcessStatistics? {
        guard let stat = read("/proc/self/stat"), let boot = read("/proc/stat"),
            let fields = fieldsAfterCommand(stat), let bootTime = bootTime(boot)
        else { return nil }
        // After the command's closing parenthesis: field 3 (state) is index 0, so field N is N - 3.
        guard fields.count > 20, let userTicks = Double(fields[11]), let systemTicks = Double(fields[12]),
            let startTicks = Double(fields[19]), let virtualBytes = UInt64(fields[20])
        else { return nil }
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        guard ticksPerSecond > 0, let openFDs = countEntries("/proc/self/fd"), let maxFDs = limit(RLIMIT_NOFILE),
            let maxVirtual = limit(RLIMIT_AS)
        else { return nil }
        return ProcessStatistics(
            cpuSeconds: (userTicks + systemTicks) / ticksPerSecond,
            startTimeSeconds: bootTime + startTicks / ticksPerSecond,
            // The listing's own descriptor was open while it counted.
            openFDs: openFDs - 1,
            maxFDs: maxFDs,
            virtualMemoryBytes: virtualBytes,
            virtualMemoryMaxBytes: maxVirtual)
    }

    /// The fields of a `/proc/PID/stat` line after `(comm)`: the command may hold spaces and
    /// parentheses, so the fields start after the last `)`.
    static func fieldsAfterCommand(_ stat: String) -> [Substring]? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].split(whereSeparator: { $0 == " " || $0 == "\n" })
    }

    /// The `btime` line of `/proc/stat`: when the system booted, in seconds since the epoch.
    static func bootTime(_ stat: String) -> Double? {
        for line in stat.split(separator: "\n") where line.hasPrefix("btime ") {
            return line.split(separator: " ").last.flatMap { Double($0) }
        }
        return nil
    }

    /// The soft limit of `resource` (`UInt64.max` when unlimited), or nil when it cannot be read.
    private static func limit(_ resource: __rlimit_resource) -> UInt64? {
        var value = rlimit()
        guard getrlimit(__rlimit_resource_t(resource.rawValue), &value) == 0 else { return nil }
        // RLIM_INFINITY is all ones (Glibc imports it as a literal that does not fit rlim_t).
        return value.rlim_cur == rlim_t.max ? .max : UInt64(value.rlim_cur)
    }

    /// The entries of directory `path`, `.` and `..` left out; nil when it cannot be listed.
    private static func countEntries(_ path: String) -> Int? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let isDot = withUnsafeBytes(of: entry.pointee.d_name) { name in
                name[0] == UInt8(ascii: ".") && (name[1] == 0 || (name[1] == UInt8(ascii: ".") && name[2] == 0))
            }
            if !isDot { count += 1 }
        }
        return count
    }

    /// The text of a small file of `/proc` (whose size `stat` does not tell), nil when unreadable.
    private static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = Glibc.read(fd, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return nil }
            if n == 0 { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
