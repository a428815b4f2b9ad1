// SOCK_STREAM is declared by whichever module first imports <sys/socket.h> in a compiler batch;
// with CSystemShims (built with _GNU_SOURCE) in the batch, a file that does not import it too
// cannot see it (a clean build of TestSupport failed so).
internal import CSystemShims
internal import Glibc

/// A local TCP port nothing listens on: the kernel picks a free one, which is released at once.
public enum UnusedPort {
    /// - Throws: `TestFailure` when no socket can be bound.
    public static func find() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(RawConnection.errorText())") }
        defer { close(fd) }
        var address = RawConnection.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw TestFailure("bind: \(RawConnection.errorText())") }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return UInt16(bigEndian: actual.sin_port)
    }
}
