internal import Glibc

/// What a start adds to the file system, so that a start that fails leaves nothing behind: the
/// data directory and the parents this start made, or, in a data directory that was there
/// already, the entries it added (the default key file, a new store's files).
///
/// Taken before the start touches anything; `remove()` runs only after the store is closed.
struct StartupFootprint {
    /// The outermost directory of the data directory's path that did not exist: everything under
    /// it is this start's.
    private let createdRoot: String?
    private let directory: String
    /// The data directory's entries before the start, when it existed.
    private let entriesBefore: Set<String>

    init(dataDirectory: String) {
        directory = dataDirectory
        createdRoot = Self.outermostMissing(dataDirectory)
        entriesBefore = createdRoot == nil ? Self.entries(of: dataDirectory) : []
    }

    /// Removes what the start made.
    func remove() {
        if let createdRoot {
            Self.removeTree(createdRoot)
            return
        }
        for name in Self.entries(of: directory).subtracting(entriesBefore) {
            Self.removeTree(directory + "/" + name)
        }
    }

    /// The first directory of `path`, from its root, that does not exist; nil when `path` does.
    private static func outermostMissing(_ path: String) -> String? {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component
            if !FileSystem.exists(prefix) { return prefix }
            prefix += "/"
        }
        return nil
    }

    /// The names in directory `path` (without "." and ".."); empty when it cannot be read.
    private static func entries(of path: String) -> Set<String> {
        guard let stream = opendir(path) else { return [] }
        defer { closedir(stream) }
        var names: Set<String> = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.insert(name) }
        }
        return names
    }

    /// Removes `path`: a file, or a directory with everything in it (symbolic links are removed,
    /// never followed).
    private static func removeTree(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            for name in entries(of: path) { removeTree(path + "/" + name) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }
}
