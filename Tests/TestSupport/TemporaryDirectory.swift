internal import Glibc

/// A fresh directory under /tmp for one test's data, removed with everything in it by `remove()`.
public final class TemporaryDirectory: Sendable {
    public let path: String

    public init(prefix: String = "moderation-test") {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(created != nil, "mkdtemp failed: errno \(errno)")
        path = String(cString: created!)
    }

    /// Writes `bytes` to the file `name` in the directory (replacing it); returns the file's path.
    /// - Throws: `TestFailure` when the file cannot be written.
    @discardableResult
    public func write(_ bytes: [UInt8], to name: String) throws -> String {
        let file = path + "/" + name
        let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw TestFailure("cannot create \(file): errno \(errno)") }
        defer { close(fd) }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, bytes.count - written) }
            guard n > 0 else { throw TestFailure("cannot write \(file): errno \(errno)") }
            written += n
        }
        return file
    }

    /// The text of the file `name` in the directory.
    /// - Throws: `TestFailure` when the file cannot be read.
    public func read(_ name: String) throws -> String {
        try Self.text(ofFile: path + "/" + name)
    }

    /// The text of the file at `file`.
    /// - Throws: `TestFailure` when the file cannot be read.
    public static func text(ofFile file: String) throws -> String {
        String(decoding: try bytes(ofFile: file), as: UTF8.self)
    }

    /// The bytes of the file at `file`.
    /// - Throws: `TestFailure` when the file cannot be read.
    public static func bytes(ofFile file: String) throws -> [UInt8] {
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw TestFailure("cannot open \(file): errno \(errno)") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            guard n >= 0 else { throw TestFailure("cannot read \(file): errno \(errno)") }
            if n == 0 { return bytes }
            bytes += chunk[0..<n]
        }
    }

    /// The names of the entries of directory `path` (`.` and `..` left out), sorted; empty when
    /// it does not exist.
    public static func names(in path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// Deletes the directory and its contents (one level of subdirectories is enough here).
    public func remove() {
        Self.removeTree(path)
    }

    private static func removeTree(_ path: String) {
        if let directory = opendir(path) {
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) {
                    String(cString: $0.bindMemory(to: CChar.self).baseAddress!)
                }
                if name == "." || name == ".." { continue }
                let child = path + "/" + name
                if entry.pointee.d_type == UInt8(DT_DIR) { removeTree(child) } else { unlink(child) }
            }
            closedir(directory)
        }
        rmdir(path)
    }
}
