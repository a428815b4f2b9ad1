internal import Glibc

/// Unbuffered writes: results to standard output, progress and errors to standard error.
///
/// Everything rpc-probe prints goes through here, never through `print`: a `watch` piped into
/// another program shows each event as it arrives, and output written by different paths of a
/// verb cannot come out of order.
enum ProbeOutput {
    /// A line on standard output.
    static func standardOutput(_ message: String) {
        writeAll(1, Array((message + "\n").utf8))
    }

    /// A line on standard error.
    static func standardError(_ message: String) {
        writeAll(2, Array((message + "\n").utf8))
    }

    /// Raw bytes on standard output (a `protoset`).
    static func standardOutputBytes(_ bytes: [UInt8]) {
        writeAll(1, bytes)
    }

    /// A message's size for `-v`: "103 bytes" as it came, or "89 bytes on the wire (deflate), 107
    /// inflated" when it came compressed (`encoding` names how).
    static func size(bytes: Int, wireBytes: Int, encoding: String?) -> String {
        guard let encoding else { return "\(bytes) bytes" }
        return "\(wireBytes) bytes on the wire (\(encoding)), \(bytes) inflated"
    }

    /// True when standard output is a terminal (binary output would garble it).
    static var standardOutputIsTerminal: Bool { isatty(1) == 1 }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, bytes.count - written) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            written += n
        }
    }
}

/// Writes a line to standard error.
func printError(_ message: String) {
    ProbeOutput.standardError(message)
}
