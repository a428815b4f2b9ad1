internal import Glibc

/// Unbuffered writes to standard error (progress and errors never mix into standard output).
enum ProbeOutput {
    static func standardError(_ message: String) {
        var line = message + "\n"
        line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }
}
