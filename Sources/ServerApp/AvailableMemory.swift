internal import Glibc

/// The memory this process may use: the machine's physical memory, or the limit of its cgroup
/// (v2 `memory.max`, v1 `memory.limit_in_bytes`) when that is lower. The default memory budget
/// is half of it.
enum AvailableMemory {
    static func bytes() -> Int {
        let pages = sysconf(Int32(_SC_PHYS_PAGES))
        let pageSize = sysconf(Int32(_SC_PAGESIZE))
        var available = pages > 0 && pageSize > 0 ? pages * pageSize : Int.max
        for path in limitFiles() {
            guard let text = try? FileSystem.readText(path) else { continue }
            let trimmed = text.split(whereSeparator: { $0.isWhitespace }).first.map(String.init) ?? ""
            if let limit = Int(trimmed), limit > 0 { available = min(available, limit) }
        }
        return available
    }

    /// The cgroup files that may hold a limit: the namespaced views, and the process's own cgroup
    /// and its ancestors as /proc/self/cgroup names them ("max" in v2 means none and is skipped).
    static func limitFiles() -> [String] {
        var files = ["/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"]
        let lines = (try? FileSystem.readText("/proc/self/cgroup"))?.split(separator: "\n") ?? []
        for line in lines {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, fields[2].hasPrefix("/") else { continue }
            let isV2 = fields[0] == "0" && fields[1].isEmpty
            let isV1Memory = fields[1].split(separator: ",").contains("memory")
            guard isV2 || isV1Memory else { continue }
            var path = String(fields[2])
            while path.count > 1 {
                files.append(
                    isV2 ? "/sys/fs/cgroup\(path)/memory.max" : "/sys/fs/cgroup/memory\(path)/memory.limit_in_bytes")
                path = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
                if path.isEmpty { break }
            }
        }
        return files
    }
}
