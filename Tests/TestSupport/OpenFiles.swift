internal import Glibc

/// This process's open file descriptors, by what they point at (/proc/self/fd).
public enum OpenFiles {
    /// Descriptors whose target contains `kind`, e.g. "anon_inode:[eventpoll]" for epoll
    /// instances, "[eventfd]", "[timerfd]", or "socket:".
    public static func count(_ kinds: [String]) -> Int {
        guard let directory = opendir("/proc/self/fd") else { return 0 }
        defer { closedir(directory) }
        var count = 0
        var target = [CChar](repeating: 0, count: 256)
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard Int(name) != nil else { continue }
            let n = readlink("/proc/self/fd/\(name)", &target, target.count - 1)
            guard n > 0 else { continue }
            let text = String(decoding: target[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if kinds.contains(where: { text.contains($0) }) { count += 1 }
        }
        return count
    }

    /// epoll, eventfd and timerfd descriptors: what event loops hold.
    public static var eventLoopDescriptors: Int { count(["[eventpoll]", "[eventfd]", "[timerfd]"]) }
}
