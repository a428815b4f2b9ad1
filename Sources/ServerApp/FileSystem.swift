internal import Glibc

/// The few file operations the server needs, without Foundation.
enum FileSystem {
    /// The whole file as text, or nil when it cannot be read.
    static func readText(_ path: String) -> String? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = fread(&chunk, 1, chunk.count, file)
            if n > 0 { bytes.append(contentsOf: chunk[0..<n]) }
            if n < chunk.count { break }
        }
        return String(decoding: bytes, as: UTF8.self)
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
