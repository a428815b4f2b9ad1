internal import Glibc
import RPCCore

/// Many authenticated idle connections, held by a python3 child process: plain sockets that send
/// the preface and HELLO, read HELLO_ACK and then stay open until `closeAll()`.
///
/// The clients live in another process because both ends of 10 000 connections need more
/// descriptors than one process may have where the hard RLIMIT_NOFILE is 20 000 and cannot be
/// raised; it also keeps the clients' memory out of the test process, so that its RSS growth is
/// the server's alone.
public final class HandshakeSwarm {
    private let process: PythonProcess
    private var closed = false
    /// Connections that received HELLO_ACK.
    public let acknowledged: Int

    /// Opens `count` connections to 127.0.0.1:`port`, `batch` at a time (the listen backlog never
    /// overflows), each batch waiting for its HELLO_ACKs before the next one starts.
    /// - Throws: `TestFailure` when python3 is missing, or a connection fails or gets no HELLO_ACK.
    public init(port: UInt16, count: Int, batch: Int = 500, timeoutMs: Int = 60_000) throws {
        let opening = Frames.opening().map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined()
        process = try PythonProcess(
            script: Self.script, arguments: [String(port), String(count), String(batch), opening])
        let line = try process.readLine(timeoutMs: timeoutMs)
        guard line.hasPrefix("ready "), let acknowledged = Int(line.dropFirst(6)) else {
            throw TestFailure("the swarm said: \(line)")
        }
        self.acknowledged = acknowledged
    }

    deinit {
        try? closeAll()
    }

    /// Closes every connection and waits for the child to exit.
    public func closeAll() throws {
        guard !closed else { return }
        closed = true
        process.closeInput()
        let line = try process.readLine(timeoutMs: 30_000)
        guard line == "closed" else { throw TestFailure("the swarm said: \(line)") }
        try process.wait(timeoutMs: 10_000)
    }

    private static let script = """
        import resource, socket, sys
        port, count, batch, opening = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), bytes.fromhex(sys.argv[4])
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < count + 64:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, count + 64), hard))
        def read_exact(s, n):
            data = b''
            while len(data) < n:
                chunk = s.recv(n - len(data))
                if not chunk:
                    print('closed by the server after %d connections' % len(sockets), flush=True)
                    sys.exit(1)
                data += chunk
            return data
        sockets = []
        while len(sockets) < count:
            group = []
            for _ in range(min(batch, count - len(sockets))):
                s = socket.create_connection(('127.0.0.1', port), timeout=10)
                s.sendall(opening)
                group.append(s)
            for s in group:
                header = read_exact(s, 12)
                read_exact(s, int.from_bytes(header[0:4], 'big'))
                if header[4] != 2:
                    print('frame type %d instead of HELLO_ACK' % header[4], flush=True)
                    sys.exit(1)
            sockets += group
        print('ready %d' % len(sockets), flush=True)
        sys.stdin.read()
        for s in sockets:
            s.close()
        print('closed', flush=True)
        """
}

/// The process's open-file limit.
public enum FileLimits {
    /// Raises RLIMIT_NOFILE to at least `count` (the hard limit too, when privileged); returns
    /// whether the process may now have `count` descriptors open.
    public static func raise(to count: Int) -> Bool {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return false }
        let wanted = rlim_t(count)
        if limit.rlim_cur >= wanted { return true }
        limit.rlim_cur = wanted
        if limit.rlim_max < wanted { limit.rlim_max = wanted }
        return setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0
    }
}
