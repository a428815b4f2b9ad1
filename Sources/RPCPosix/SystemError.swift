internal import Glibc

/// A failed system call, with its errno — like NIO's `IOError`.
public struct SystemError: Error, Equatable, CustomStringConvertible {
    /// What was being done, e.g. "bind 127.0.0.1:7600".
    public var operation: String
    public var errno: Int32

    public init(_ operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }

    public var description: String { "\(operation): \(String(cString: strerror(errno))) (errno \(errno))" }
}
