internal import Glibc
import RPCPosix

/// The few file operations the server needs, without Foundation.
enum FileSystem {
    /// The whole file as text.
    /// - Throws: the `SystemError` of the open or read that failed, so that a message can say
    ///   why ("No such file or directory", "Permission denied", "Is a directory").
    static func readText(_ path: String) throws(SystemError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError("open \(path)", errno: errno) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = read(fd, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw SystemError("read \(path)", errno: errno) }
            if n == 0 { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(contentsOf: chunk[0..<n])
        }
    }

    /// Writes `text` to a new file readable only by its owner; fails if it exists.
    static func createPrivateFile(_ path: String, text: String) -> Int32 {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        var text = text
        let written = text.withUTF8 { write(fd, $0.baseAddress, $0.count) }
        return written == text.utf8.count ? 0 : errno
    }

    /// Creates `path` and its parents (like mkdir -p); returns 0 or an errno.
    static func makeDirectories(_ path: String) -> Int32 {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component + "/"
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST { return errno }
        }
        var info = stat()
        guard stat(path, &info) == 0 else { return errno }
        return (info.st_mode & S_IFMT) == S_IFDIR ? 0 : ENOTDIR
    }

    /// True when the calling process may write in directory `path`.
    static func isWritableDirectory(_ path: String) -> Bool { access(path, W_OK | X_OK) == 0 }

    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    static func describe(errno code: Int32) -> String { String(cString: strerror(code)) }
}
