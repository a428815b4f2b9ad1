internal import Glibc

/// Unbuffered writes: results to standard output, progress and errors to standard error.
enum ProbeOutput {
    /// A line on standard output, written at once (a `watch` piped into another program shows
    /// each event as it arrives).
    static func standardOutput(_ message: String) {
        var line = message + "\n"
        line.withUTF8 { _ = write(1, $0.baseAddress, $0.count) }
    }

    static func standardError(_ message: String) {
        var line = message + "\n"
        line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }
}
