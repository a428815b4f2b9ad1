internal import Glibc
import ProtoBridge
public import RPCCore
public import RPCMessages

/// A raw TCP socket speaking bytes, not calls: a test writes anything (valid frames or not) and
/// reads exactly what the peer sends — frames, then the close — with timeouts.
///
/// Used as a client against a real server, and, from `RawListener.accept`, as the server end of
/// a connection made by the client library. The socket is non-blocking; every wait is a `poll`
/// with a deadline, so a test that expects something that never comes fails instead of hanging.
public final class RawConnection {
    public let fd: Int32
    private var parser = FrameParser()
    private var sawEOF = false
    private var isClosed = false

    /// How the peer ended the connection, once it has.
    public private(set) var closeReason: String?

    /// Connects to 127.0.0.1:`port`.
    public convenience init(port: UInt16) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(Self.errorText())") }
        var address = Self.loopback(port: port)
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard status == 0 else {
            let text = Self.errorText()
            Glibc.close(fd)
            throw TestFailure("connect to 127.0.0.1:\(port): \(text)")
        }
        self.init(fd: fd)
    }

    /// Wraps a connected socket (e.g. one accepted by `RawListener`); takes ownership of `fd`.
    public init(fd: Int32) {
        self.fd = fd
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit {
        close()
    }

    /// Closes the socket (idempotent).
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        Glibc.close(fd)
    }

    /// Sends FIN: the peer reads end-of-stream, and this side can still read.
    public func shutdownWrite() {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    /// Sets the kernel's receive buffer (a small one makes a non-reading client stall sooner).
    public func setReceiveBuffer(_ bytes: Int32) {
        var value = bytes
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    // MARK: Writing

    /// Writes all of `bytes`, waiting for room up to `timeoutMs`.
    public func send(_ bytes: [UInt8], timeoutMs: Int = 5_000) throws {
        let deadline = Clock.nowMs + timeoutMs
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            }
            if n > 0 {
                sent += n
                continue
            }
            guard n < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else {
                throw TestFailure("send failed after \(sent) of \(bytes.count) bytes: \(Self.errorText())")
            }
            let left = deadline - Clock.nowMs
            guard left > 0 else {
                throw TestFailure("send stalled after \(sent) of \(bytes.count) bytes for \(timeoutMs) ms")
            }
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            _ = poll(&poller, 1, Int32(left))
        }
    }

    /// Writes what the socket takes now without waiting; returns the bytes written (0 when full).
    public func trySend(_ bytes: ArraySlice<UInt8>) throws -> Int {
        guard !bytes.isEmpty else { return 0 }
        let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
        if n >= 0 { return n }
        if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return 0 }
        throw TestFailure("send failed: \(Self.errorText())")
    }

    /// Waits up to `timeoutMs` for room to write; returns whether there is.
    @discardableResult
    public func waitWritable(timeoutMs: Int) -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        return poll(&poller, 1, Int32(timeoutMs)) > 0
    }

    // MARK: Reading

    /// The next frame, or nil when the peer closed (end of stream or reset) first.
    /// - Throws: `TestFailure` when nothing complete arrives within `timeoutMs`.
    public func nextFrame(timeoutMs: Int = 5_000) throws -> RawFrame? {
        let deadline = Clock.nowMs + timeoutMs
        while true {
            if let frame = parser.next() { return frame }
            if sawEOF {
                guard parser.bufferedCount == 0 else {
                    throw TestFailure("the peer closed after \(parser.bufferedCount) bytes of an incomplete frame")
                }
                return nil
            }
            let left = deadline - Clock.nowMs
            guard left > 0 else {
                throw TestFailure("no frame within \(timeoutMs) ms (\(parser.bufferedCount) bytes of a partial one)")
            }
            try readSome(timeoutMs: left)
        }
    }

    /// A frame if one is complete within `waitMs` (0: only what has already arrived), else nil.
    /// - Throws: `TestFailure` when the peer has closed.
    public func availableFrame(waitMs: Int = 0) throws -> RawFrame? {
        if let frame = parser.next() { return frame }
        guard !sawEOF else { throw TestFailure("the peer closed the connection (\(closeReason ?? "?"))") }
        try readSome(timeoutMs: waitMs)
        if let frame = parser.next() { return frame }
        guard !sawEOF else { throw TestFailure("the peer closed the connection (\(closeReason ?? "?"))") }
        return nil
    }

    /// The next frame, which must exist (the peer must not close first).
    public func expectFrame(timeoutMs: Int = 5_000) throws -> RawFrame {
        guard let frame = try nextFrame(timeoutMs: timeoutMs) else {
            throw TestFailure("the peer closed the connection (\(closeReason ?? "?")) instead of sending a frame")
        }
        return frame
    }

    /// The next frame of `type`, skipping and returning the frames before it.
    public func expectFrame(_ type: FrameType, timeoutMs: Int = 5_000) throws -> (frame: RawFrame, skipped: [RawFrame])
    {
        var skipped: [RawFrame] = []
        let deadline = Clock.nowMs + timeoutMs
        while true {
            let frame = try expectFrame(timeoutMs: max(1, deadline - Clock.nowMs))
            if frame.type == type { return (frame, skipped) }
            skipped.append(frame)
        }
    }

    /// Reads until the peer closes; returns the frames that came first.
    /// - Throws: `TestFailure` when the connection is still open after `timeoutMs`.
    public func expectClose(timeoutMs: Int = 5_000) throws -> [RawFrame] {
        var frames: [RawFrame] = []
        let deadline = Clock.nowMs + timeoutMs
        while true {
            let left = deadline - Clock.nowMs
            guard left > 0 else {
                throw TestFailure("the connection is still open after \(timeoutMs) ms; frames so far: \(frames)")
            }
            guard let frame = try nextFrame(timeoutMs: left) else { return frames }
            frames.append(frame)
        }
    }

    /// True when nothing at all arrives for `ms` (no frame, no close).
    public func staysQuiet(forMs ms: Int) throws -> Bool {
        let deadline = Clock.nowMs + ms
        while parser.bufferedCount == 0 && !sawEOF {
            let left = deadline - Clock.nowMs
            if left <= 0 { return true }
            try readSome(timeoutMs: left)
        }
        return false
    }

    /// Reads exactly `count` raw bytes (a preface), bypassing frame parsing.
    public func readBytes(_ count: Int, timeoutMs: Int = 5_000) throws -> [UInt8] {
        let deadline = Clock.nowMs + timeoutMs
        while parser.bufferedCount < count {
            guard !sawEOF else { throw TestFailure("the peer closed after \(parser.bufferedCount) of \(count) bytes") }
            let left = deadline - Clock.nowMs
            guard left > 0 else {
                throw TestFailure("\(parser.bufferedCount) of \(count) bytes within \(timeoutMs) ms")
            }
            try readSome(timeoutMs: left)
        }
        return parser.take(count)
    }

    /// The raw bytes that arrive within `waitMs` (0: only those already here), bypassing frame
    /// parsing; empty when none did. `peerClosed` tells whether the peer closed meanwhile.
    public func availableBytes(waitMs: Int = 0) throws -> [UInt8] {
        if parser.bufferedCount == 0 && !sawEOF { try readSome(timeoutMs: waitMs) }
        return parser.take(parser.bufferedCount)
    }

    /// True once the peer closed (end of stream or reset).
    public var peerClosed: Bool { sawEOF }

    /// Reads every raw byte until the peer closes (an answer in another protocol), bypassing frame
    /// parsing.
    /// - Throws: `TestFailure` when the connection is still open after `timeoutMs`.
    public func readUntilClose(timeoutMs: Int = 5_000) throws -> [UInt8] {
        let deadline = Clock.nowMs + timeoutMs
        while !sawEOF {
            let left = deadline - Clock.nowMs
            guard left > 0 else { throw TestFailure("the connection is still open after \(timeoutMs) ms") }
            try readSome(timeoutMs: left)
        }
        return parser.take(parser.bufferedCount)
    }

    /// Waits up to `timeoutMs` for data and buffers what arrives.
    private func readSome(timeoutMs: Int) throws {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, Int32(clamping: timeoutMs))
        guard ready > 0 else { return }
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
        if n > 0 {
            parser.append(chunk[0..<n])
        } else if n == 0 {
            sawEOF = true
            closeReason = "end of stream"
        } else if errno == ECONNRESET || errno == EPIPE {
            sawEOF = true
            closeReason = "reset"
        } else if errno != EAGAIN && errno != EINTR {
            throw TestFailure("read failed: \(Self.errorText())")
        }
    }

    // MARK: Handshake

    /// Sends the preface and HELLO and returns the server's HELLO_ACK.
    /// - Throws: `TestFailure` when the server answers anything else.
    @discardableResult
    public func handshake(apiKey: String = Frames.apiKey, acceptDeflate: Bool = false) throws -> HelloAck {
        try send(Frames.opening(apiKey: apiKey, acceptDeflate: acceptDeflate))
        return try expectFrame().helloAck()
    }

    /// Sends `frame` and returns the REPLY to its stream, skipping other frames.
    public func roundTrip(_ frame: [UInt8], streamID: UInt32, timeoutMs: Int = 5_000) throws -> RawFrame {
        try send(frame)
        let deadline = Clock.nowMs + timeoutMs
        while true {
            let reply = try expectFrame(.reply, timeoutMs: max(1, deadline - Clock.nowMs)).frame
            if reply.streamID == streamID { return reply }
        }
    }

    // MARK: Helpers

    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    static func errorText() -> String {
        String(cString: strerror(errno)) + " (errno \(errno))"
    }
}

/// A listening socket on 127.0.0.1, port chosen by the kernel: the server end of client tests.
public final class RawListener {
    public let fd: Int32
    public let port: UInt16

    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(RawConnection.errorText())") }
        var address = RawConnection.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            let text = RawConnection.errorText()
            Glibc.close(fd)
            throw TestFailure("bind/listen: \(text)")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.fd = fd
        port = UInt16(bigEndian: actual.sin_port)
    }

    deinit {
        Glibc.close(fd)
    }

    /// The next connection, waiting up to `timeoutMs`.
    public func accept(timeoutMs: Int = 5_000) throws -> RawConnection {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(timeoutMs)) > 0 else { throw TestFailure("no connection within \(timeoutMs) ms") }
        let client = Glibc.accept(fd, nil, nil)
        guard client >= 0 else { throw TestFailure("accept: \(RawConnection.errorText())") }
        return RawConnection(fd: client)
    }

    /// Accepts a client and plays the server's side of the handshake: reads the preface and
    /// HELLO, answers HELLO_ACK. Returns the connection and the client's HELLO.
    public func acceptHandshake(
        maxConcurrentCalls: UInt32 = 100, timeoutMs: Int = 5_000
    ) throws -> (connection: RawConnection, hello: Hello) {
        let connection = try accept(timeoutMs: timeoutMs)
        let preface = try connection.readBytes(Preface.size, timeoutMs: timeoutMs)
        guard preface == Preface.bytes else { throw TestFailure("the client sent the preface \(preface)") }
        let frame = try connection.expectFrame(timeoutMs: timeoutMs)
        guard frame.type == .hello else { throw TestFailure("the client's first frame is \(frame)") }
        let hello = try Hello(serializedBytes: frame.payload)
        let ack = HelloAck(
            serverName: "raw-test-server", serverVersion: "0", protocolVersion: 1,
            maxMessageBytes: 4 << 20, maxCallHeaderBytes: 8 << 10, maxConcurrentCalls: maxConcurrentCalls,
            acceptEncodings: hello.acceptEncodings.filter { $0 == "deflate" }, appID: Frames.appID)
        try connection.send(Frames.frame(.helloAck, payload: ack.serializedBytes()))
        return (connection, hello)
    }
}

/// Milliseconds on the monotonic clock, for test deadlines.
public enum Clock {
    public static var nowMs: Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int(now.tv_sec) * 1_000 + Int(now.tv_nsec) / 1_000_000
    }

    /// Lets `ms` pass: the window of a measurement (CPU used while nothing should happen), never
    /// a wait for an event that could be awaited.
    public static func measure(forMs ms: Int) {
        usleep(useconds_t(ms * 1_000))
    }
}

/// Polls `condition` until it holds or `timeoutMs` passes; returns whether it held.
///
/// For state that changes without an event a test can wait on (a server's connection count).
@discardableResult
public func waitUntil(timeoutMs: Int = 5_000, pollMs: Int = 5, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Clock.nowMs + timeoutMs
    while true {
        if try condition() { return true }
        if Clock.nowMs >= deadline { return false }
        usleep(useconds_t(pollMs * 1_000))
    }
}
