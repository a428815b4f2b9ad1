internal import Glibc
internal import RPCPosix

/// A child process with its standard input, output and error on pipes, for tests that run the
/// built executables (`rpc-probe`, `moderation-server`) exactly as a user would.
///
/// Output is read while the child runs, so a chatty child never blocks on a full pipe. Every wait
/// has a deadline; a child still running when its `ChildProcess` is released is killed.
public final class ChildProcess {
    /// How a child ended and everything it printed.
    public struct Outcome: Sendable, CustomStringConvertible {
        /// The exit status, or -1 when a signal ended the child.
        public let exitCode: Int32
        /// The signal that ended the child, if one did.
        public let signal: Int32?
        public let standardOutputBytes: [UInt8]
        public let standardError: String

        public var standardOutput: String { String(decoding: standardOutputBytes, as: UTF8.self) }

        /// Standard output split into lines (without the last, empty one).
        public var lines: [String] {
            var lines = standardOutput.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if lines.last == "" { lines.removeLast() }
            return lines
        }

        public var description: String {
            "exit \(exitCode)\(signal.map { " (signal \($0))" } ?? "")\n--- stdout:\n\(standardOutput)\n--- stderr:\n\(standardError)"
        }
    }

    public let pid: Int32
    private var input: Int32?
    private var pendingInput: [UInt8]
    private var output: Int32?
    private var error: Int32?
    private var outputBytes: [UInt8] = []
    private var errorBytes: [UInt8] = []
    /// How much of `outputBytes` `readLine` has returned.
    private var lineCursor = 0
    private var waitStatus: Int32?

    /// Starts `executable` with `arguments`.
    /// - Parameters:
    ///   - environment: the child's whole environment (nil: this process's).
    ///   - standardInput: bytes the child reads on standard input, then end of file; nil gives it
    ///     /dev/null.
    ///   - standardErrorPath: a file to send standard error to (created or appended) instead of
    ///     capturing it — for long-running children that log.
    /// - Throws: `TestFailure` when the process cannot be started.
    public init(
        executable: String, arguments: [String], environment: [String: String]? = nil, standardInput: [UInt8]? = nil,
        standardErrorPath: String? = nil
    ) throws {
        var toChild: [Int32] = [-1, -1]
        var fromChild: [Int32] = [-1, -1]
        var errorsFromChild: [Int32] = [-1, -1]
        guard pipe(&fromChild) == 0, standardErrorPath != nil || pipe(&errorsFromChild) == 0,
            standardInput == nil || pipe(&toChild) == 0
        else {
            throw TestFailure("pipe: \(String(cString: strerror(errno)))")
        }
        // Close-on-exec, so no other child inherits them (dup2 clears it on the child's 0, 1 and 2).
        for fd in toChild + fromChild + errorsFromChild where fd >= 0 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if standardInput != nil {
            posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        if let standardErrorPath {
            posix_spawn_file_actions_addopen(&actions, 2, standardErrorPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        } else {
            posix_spawn_file_actions_adddup2(&actions, errorsFromChild[1], 2)
        }
        let all = [executable] + arguments
        var argv: [UnsafeMutablePointer<CChar>?] = all.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var envp: [UnsafeMutablePointer<CChar>?] =
            (environment ?? ProcessEnvironment.current())
            .sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, nil, &argv, &envp)
        for fd in [toChild[0], fromChild[1], errorsFromChild[1]] where fd >= 0 { close(fd) }
        guard spawned == 0 else {
            for fd in [toChild[1], fromChild[0], errorsFromChild[0]] where fd >= 0 { close(fd) }
            throw TestFailure("posix_spawn \(executable): \(String(cString: strerror(spawned)))")
        }
        self.pid = pid
        output = fromChild[0]
        error = errorsFromChild[0] >= 0 ? errorsFromChild[0] : nil
        input = toChild[1] >= 0 ? toChild[1] : nil
        pendingInput = standardInput ?? []
        if let input {
            _ = fcntl(input, F_SETFL, fcntl(input, F_GETFL) | O_NONBLOCK)
            if pendingInput.isEmpty { closeInput() }
        }
    }

    deinit {
        if waitStatus == nil {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        for fd in [input, output, error] { if let fd { close(fd) } }
    }

    /// Runs a child to its end.
    /// - Throws: `TestFailure` when it cannot start, or is still running after `timeoutMs` (it is killed).
    public static func run(
        executable: String, arguments: [String], environment: [String: String]? = nil, standardInput: [UInt8]? = nil,
        timeoutMs: Int = 30_000
    ) throws -> Outcome {
        try ChildProcess(
            executable: executable, arguments: arguments, environment: environment, standardInput: standardInput
        )
        .finish(timeoutMs: timeoutMs)
    }

    /// The next line the child prints on standard output, without its newline.
    /// - Throws: `TestFailure` when none comes within `timeoutMs` or the output ends first.
    public func readLine(timeoutMs: Int) throws -> String {
        let deadline = Clock.nowMs + timeoutMs
        while true {
            if let newline = outputBytes[lineCursor...].firstIndex(of: 0x0A) {
                let line = String(decoding: outputBytes[lineCursor..<newline], as: UTF8.self)
                lineCursor = newline + 1
                return line
            }
            guard output != nil else {
                throw TestFailure(
                    "the child's output ended without another line; stderr:\n\(String(decoding: errorBytes, as: UTF8.self))"
                )
            }
            let left = deadline - Clock.nowMs
            guard left > 0 else { throw TestFailure("the child printed no line within \(timeoutMs) ms") }
            pump(timeoutMs: left)
        }
    }

    /// Sends `signal` to the child.
    public func send(signal: Int32) {
        if waitStatus == nil { kill(pid, signal) }
    }

    /// Closes the child's standard input: it reads end of file.
    public func closeInput() {
        if let input { close(input) }
        input = nil
        pendingInput = []
    }

    /// Reads the child's output to its end and waits for it to exit.
    /// - Throws: `TestFailure` when it is still running after `timeoutMs`; it is then killed.
    public func finish(timeoutMs: Int = 30_000) throws -> Outcome {
        let deadline = Clock.nowMs + timeoutMs
        while output != nil || error != nil || reap() == nil {
            let left = deadline - Clock.nowMs
            guard left > 0 else {
                kill(pid, SIGKILL)
                let partial = String(decoding: outputBytes, as: UTF8.self)
                throw TestFailure(
                    "the child was still running after \(timeoutMs) ms (killed); stdout so far:\n\(partial)"
                        + "\nstderr so far:\n\(String(decoding: errorBytes, as: UTF8.self))")
            }
            if output == nil && error == nil {
                usleep(2_000)
            } else {
                pump(timeoutMs: min(left, 100))
            }
        }
        let status = waitStatus!
        let signal = status & 0x7F
        return Outcome(
            exitCode: signal == 0 ? (status >> 8) & 0xFF : -1, signal: signal == 0 ? nil : signal,
            standardOutputBytes: outputBytes, standardError: String(decoding: errorBytes, as: UTF8.self))
    }

    /// True while the child has not exited.
    public var isRunning: Bool { reap() == nil }

    /// The wait status once the child has exited (reaping it), else nil.
    @discardableResult
    private func reap() -> Int32? {
        if let waitStatus { return waitStatus }
        var status: Int32 = 0
        let done = waitpid(pid, &status, WNOHANG)
        guard done == pid else { return nil }
        waitStatus = status
        return status
    }

    /// One round of I/O: waits up to `timeoutMs` for output (or room for input) and moves what it can.
    private func pump(timeoutMs: Int) {
        var fds: [pollfd] = []
        if let output { fds.append(pollfd(fd: output, events: Int16(POLLIN), revents: 0)) }
        if let error { fds.append(pollfd(fd: error, events: Int16(POLLIN), revents: 0)) }
        if let input, !pendingInput.isEmpty { fds.append(pollfd(fd: input, events: Int16(POLLOUT), revents: 0)) }
        guard !fds.isEmpty else { return }
        guard poll(&fds, nfds_t(fds.count), Int32(max(1, timeoutMs))) > 0 else { return }
        for polled in fds where polled.revents != 0 {
            if polled.fd == input {
                let n = pendingInput.withUnsafeBytes { write(polled.fd, $0.baseAddress!, $0.count) }
                if n > 0 { pendingInput.removeFirst(n) }
                if n < 0 && errno != EAGAIN && errno != EINTR { pendingInput = [] }
                if pendingInput.isEmpty { closeInput() }
                continue
            }
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            let n = chunk.withUnsafeMutableBytes { read(polled.fd, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n > 0 {
                if polled.fd == output { outputBytes += chunk[0..<n] } else { errorBytes += chunk[0..<n] }
            } else {
                close(polled.fd)
                if polled.fd == output { output = nil } else { error = nil }
            }
        }
    }
}
