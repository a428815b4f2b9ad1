internal import COpenSSL
internal import Glibc

/// rpc-probe's cache of servers' descriptor sets, in `${XDG_CACHE_HOME:-$HOME/.cache}/rpc-probe/`.
///
/// A file is named after the server's build and the set's digest,
/// `moderation-server-0.1.0-<64 hex>.protoset`, and holds the set's bytes as reflection returned
/// them (so it is a `--protoset` file too). It is used only when the server's HELLO_ACK names the
/// same digest (`schema_digest`) and the file's bytes still hash to it: a server that gives no
/// digest, or another build, is asked by reflection, and a file that is corrupt, cut short or
/// unreadable is ignored and written again. Nothing about the cache is ever an error: a directory
/// that cannot be made or written leaves rpc-probe working as without a cache.
struct SchemaCache {
    /// The directory the files are in.
    let directory: String

    /// The cache of `environment`: `$XDG_CACHE_HOME/rpc-probe` when that is an absolute path (the
    /// XDG rule: a relative one is ignored), else `$HOME/.cache/rpc-probe`; nil without either.
    init?(environment: [String: String]) {
        if let base = environment["XDG_CACHE_HOME"], base.hasPrefix("/") {
            directory = base + "/rpc-probe"
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            directory = home + "/.cache/rpc-probe"
        } else {
            return nil
        }
    }

    /// True when `digest` is what HELLO_ACK's `schema_digest` must be for the cache to be used:
    /// "sha256:" and 64 lowercase hex digits.
    static func isUsable(_ digest: String) -> Bool {
        let utf8 = Array(digest.utf8)
        guard utf8.count == 71, digest.hasPrefix("sha256:") else { return false }
        return utf8[7...].allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// "sha256:" and the hex SHA-256 of `bytes`, as the server computes `schema_digest`.
    static func digest(of bytes: [UInt8]) -> String {
        var hash = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        _ = bytes.withUnsafeBufferPointer { SHA256($0.baseAddress, $0.count, &hash) }
        let hex = Array("0123456789abcdef".unicodeScalars)
        var text = "sha256:"
        for byte in hash {
            text.unicodeScalars.append(hex[Int(byte >> 4)])
            text.unicodeScalars.append(hex[Int(byte & 0x0F)])
        }
        return text
    }

    /// The path of the file for `server` `version`'s set with `digest` (a usable one).
    func path(server: String, version: String, digest: String) -> String {
        "\(directory)/\(Self.prefix(server: server, version: version))\(digest.dropFirst("sha256:".count)).protoset"
    }

    /// The kept set of that build, when there is one whose bytes hash to `digest`; nil otherwise
    /// (no file, unreadable, corrupt).
    func lookup(server: String, version: String, digest: String) -> [UInt8]? {
        guard let bytes = SchemaLoader.readFile(path(server: server, version: version, digest: digest)),
            Self.digest(of: bytes) == digest
        else { return nil }
        return bytes
    }

    /// Keeps `bytes` (whose digest the caller checked) for that build, replacing any file of the
    /// same name (a corrupt one) and removing the sets kept for the same server and version
    /// with other digests (former builds of the same version number). Written to a temporary
    /// file and renamed, so a reader never sees half a file.
    /// - Returns: the file's path, or nil when it could not be written (the cache is then not used).
    @discardableResult
    func store(_ bytes: [UInt8], server: String, version: String, digest: String) -> String? {
        guard makeDirectory() else { return nil }
        let target = path(server: server, version: version, digest: digest)
        let temporary = "\(target).\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            written += n
        }
        guard close(fd) == 0, written == bytes.count, rename(temporary, target) == 0 else {
            unlink(temporary)
            return nil
        }
        removeOthers(of: Self.prefix(server: server, version: version), keeping: target)
        return target
    }

    /// The start of the file names of one build: its name and version, each reduced to
    /// `[A-Za-z0-9._-]` (a server's words must not make a path), then `-`.
    private static func prefix(server: String, version: String) -> String {
        func safe(_ text: String) -> String {
            let kept = text.unicodeScalars.map { scalar -> Character in
                scalar.isASCII
                    && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "."
                        || scalar == "-")
                    ? Character(scalar) : "_"
            }
            return String(kept.prefix(64))
        }
        return "\(safe(server))-\(safe(version))-"
    }

    /// Makes the directory (and its parents) private to the user when missing; true when it exists.
    private func makeDirectory() -> Bool {
        var path = ""
        for component in directory.split(separator: "/") {
            path += "/" + component
            if mkdir(path, 0o700) != 0 && errno != EEXIST { return false }
        }
        var info = stat()
        return stat(directory, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Removes the `.protoset` files starting with `prefix` other than `kept`.
    private func removeOthers(of prefix: String, keeping kept: String) {
        guard let listing = opendir(directory) else { return }
        var stale: [String] = []
        while let entry = readdir(listing) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name.hasPrefix(prefix) && name.hasSuffix(".protoset") && "\(directory)/\(name)" != kept {
                stale.append(name)
            }
        }
        closedir(listing)
        for name in stale { unlink("\(directory)/\(name)") }
    }
}
