internal import Glibc

/// Runs a Python 3 script as an independent implementation to check bytes against (zlib).
///
/// Input and output go through temporary files: the script gets their paths as `sys.argv[1]`
/// and `sys.argv[2]`.
public enum Python {
    /// The python3 found on PATH, or nil.
    public static let executable: String? = {
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/python3"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }()

    public static var isAvailable: Bool { executable != nil }

    /// Runs `script` with `input` as the contents of the file `sys.argv[1]`; returns what it wrote
    /// to `sys.argv[2]`.
    /// - Throws: `TestFailure` when python3 is missing or the script fails.
    public static func run(_ script: String, input: [UInt8]) throws -> [UInt8] {
        guard let executable else { throw TestFailure("python3 is not on PATH") }
        let inputPath = try temporaryFile(containing: input)
        let outputPath = try temporaryFile(containing: [])
        defer {
            unlink(inputPath)
            unlink(outputPath)
        }
        let arguments = [executable, "-c", script, inputPath, outputPath]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, nil, nil, &argv, environ)
        guard spawned == 0 else { throw TestFailure("posix_spawn python3: \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // WIFEXITED && WEXITSTATUS == 0, spelled out: the macros are not imported.
        guard status & 0x7F == 0, (status >> 8) & 0xFF == 0 else {
            throw TestFailure("python3 failed (wait status \(status)); its error is on standard error")
        }
        return try readFile(outputPath)
    }

    private static func temporaryFile(containing bytes: [UInt8]) throws -> String {
        var template = Array("/tmp/mrpc-test-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw TestFailure("mkstemp: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, bytes.count - written) }
            guard n > 0 else { throw TestFailure("write: \(String(cString: strerror(errno)))") }
            written += n
        }
        return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    private static func readFile(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw TestFailure("open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            guard n > 0 else { break }
            bytes += chunk[0..<n]
        }
        return bytes
    }
}

/// Messages in a file as `u32` big-endian length, then bytes — how tests hand lists to scripts.
public enum LengthPrefixed {
    public static func encode(_ messages: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        for message in messages {
            let count = UInt32(message.count)
            out += [UInt8(count >> 24), UInt8((count >> 16) & 0xFF), UInt8((count >> 8) & 0xFF), UInt8(count & 0xFF)]
            out += message
        }
        return out
    }

    public static func decode(_ bytes: [UInt8]) throws -> [[UInt8]] {
        var messages: [[UInt8]] = []
        var offset = 0
        while offset < bytes.count {
            guard offset + 4 <= bytes.count else { throw TestFailure("a length prefix is cut at byte \(offset)") }
            let count =
                Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8
                | Int(bytes[offset + 3])
            offset += 4
            guard offset + count <= bytes.count else {
                throw TestFailure("a message of \(count) bytes is cut at byte \(offset)")
            }
            messages.append(Array(bytes[offset..<offset + count]))
            offset += count
        }
        return messages
    }
}

/// A python3 child process talking to the test over pipes: lines on its standard output, and the
/// end of its standard input as the signal to finish. Killed if still running when released.
public final class PythonProcess {
    private let pid: pid_t
    private var input: Int32?
    private let output: Int32
    private var buffered: [UInt8] = []
    private var exited = false

    /// Starts `python3 -c script arguments…`.
    public init(script: String, arguments: [String]) throws {
        guard let executable = Python.executable else { throw TestFailure("python3 is not on PATH") }
        var toChild: [Int32] = [0, 0]
        var fromChild: [Int32] = [0, 0]
        guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else {
            throw TestFailure("pipe: \(String(cString: strerror(errno)))")
        }
        // Close-on-exec, so no other child inherits them (dup2 clears it on the child's 0 and 1).
        for fd in toChild + fromChild { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        let all = [executable, "-c", script] + arguments
        var argv: [UnsafeMutablePointer<CChar>?] = all.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, nil, &argv, environ)
        close(toChild[0])
        close(fromChild[1])
        guard spawned == 0 else {
            close(toChild[1])
            close(fromChild[0])
            throw TestFailure("posix_spawn python3: \(String(cString: strerror(spawned)))")
        }
        self.pid = pid
        input = toChild[1]
        output = fromChild[0]
    }

    deinit {
        if !exited {
            kill(pid, SIGKILL)
            _ = try? wait(timeoutMs: 5_000)
        }
        closeInput()
        close(output)
    }

    /// The next line the child prints, without its newline.
    /// - Throws: `TestFailure` when none comes within `timeoutMs` or the child exits first.
    public func readLine(timeoutMs: Int) throws -> String {
        let deadline = Clock.nowMs + timeoutMs
        while true {
            if let newline = buffered.firstIndex(of: 0x0A) {
                let line = String(decoding: buffered[..<newline], as: UTF8.self)
                buffered.removeFirst(newline + 1)
                return line
            }
            let left = deadline - Clock.nowMs
            guard left > 0 else { throw TestFailure("python3 printed no line within \(timeoutMs) ms") }
            var poller = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(left)) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress!, $0.count) }
            guard n > 0 else { throw TestFailure("python3 ended its output; its error is on standard error") }
            buffered += chunk[0..<n]
        }
    }

    /// Closes the child's standard input: it reads end-of-file.
    public func closeInput() {
        if let input { close(input) }
        input = nil
    }

    /// Waits for the child to exit; returns its exit status.
    @discardableResult
    public func wait(timeoutMs: Int) throws -> Int32 {
        let deadline = Clock.nowMs + timeoutMs
        var status: Int32 = 0
        while true {
            let done = waitpid(pid, &status, WNOHANG)
            if done == pid {
                exited = true
                return (status >> 8) & 0xFF
            }
            guard Clock.nowMs < deadline else { throw TestFailure("python3 still running after \(timeoutMs) ms") }
            usleep(5_000)
        }
    }
}
