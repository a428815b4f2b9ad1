internal import Glibc

extension ProbeOutput {
    /// A file given with `-o`, created (or emptied) when named, so that a path that cannot be
    /// written fails before the work whose output it was to hold (`bench`'s load, a schema
    /// fetch); closed when released.
    final class File {
        let path: String
        private let fd: Int32

        /// Creates or truncates `path`.
        /// - Throws: `.failure` naming the path and the reason.
        init(creating path: String) throws(ProbeError) {
            self.path = path
            fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw .failure("-o: cannot create \(path): \(SchemaLoader.errorText())") }
        }

        deinit { close(fd) }

        /// Writes all of `bytes`.
        func write(_ bytes: [UInt8]) throws(ProbeError) {
            var written = 0
            while written < bytes.count {
                let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, bytes.count - written) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw .failure("-o: cannot write \(path): \(SchemaLoader.errorText())") }
                written += n
            }
        }
    }
}
