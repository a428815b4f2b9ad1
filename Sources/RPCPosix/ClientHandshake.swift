internal import CSystemShims
internal import Glibc
public import RPCCore
public import RPCMessages

/// A socket that has completed the MRPC handshake: connected, preface and HELLO sent, HELLO_ACK
/// received.
///
/// Every client connection starts from one: `ClientConnection` and the lean connections of the
/// load generator, so both connect, time out and report a refused HELLO the same way. The socket
/// is still blocking; whoever takes the handshake owns `fd` and closes it.
public struct ClientHandshake: Sendable {
    /// The connected socket (blocking, `TCP_NODELAY`).
    public let fd: Int32
    /// What the server said in HELLO_ACK.
    public let helloAck: HelloAck
    /// Bytes that arrived after HELLO_ACK: the start of what the server sends next.
    public let leftover: [UInt8]

    /// Connects, sends the preface and HELLO (accepting deflate when `options.acceptDeflate`),
    /// and waits for HELLO_ACK, all within `options.connectTimeoutMs`.
    /// - Throws: UNAVAILABLE when the server cannot be reached or sends no HELLO_ACK in time; the
    ///   server's GOAWAY error (e.g. UNAUTHENTICATED) when it refuses the HELLO; a protocol
    ///   violation when it answers with any other frame of the protocol.
    public static func connect(_ options: ClientOptions) throws(RPCError) -> ClientHandshake {
        let fd = options.host.withCString { cshim_connect($0, options.port, Int32(options.connectTimeoutMs)) }
        guard fd >= 0 else {
            throw .unavailable("cannot connect to \(options.host):\(options.port): \(String(cString: strerror(-fd)))")
        }
        _ = cshim_set_nodelay(fd)
        do throws(RPCError) {
            var out = Preface.bytes
            FrameWriter.hello(
                Hello(
                    apiKey: options.apiKey, clientName: options.clientName,
                    acceptEncodings: options.acceptDeflate ? ["deflate"] : [], appID: options.appID), into: &out)
            try sendAll(fd, out)
            var received = ReceiveBuffer()
            let deadline = monotonicNow() + UInt64(options.connectTimeoutMs) * 1_000_000
            while true {
                if let (header, payload) = try received.nextFrame(limit: options.frameLimit) {
                    switch header.type {
                    case .helloAck:
                        return ClientHandshake(
                            fd: fd, helloAck: try HelloAck(fromServer: payload), leftover: received.bytes)
                    case .goaway:
                        let goaway = try Goaway(fromServer: payload)
                        throw RPCError(status: goaway.status ?? RPCError.unavailable("the server went away").status)
                    default:
                        if header.type.isExtension { continue }
                        throw RPCError.protocolViolation("expected HELLO_ACK, got \(header.type)")
                    }
                }
                let now = monotonicNow()
                guard now < deadline else {
                    throw RPCError.unavailable("no HELLO_ACK within \(options.connectTimeoutMs) ms")
                }
                try receive(fd, into: &received, timeoutMs: Int32((deadline - now) / 1_000_000) + 1)
            }
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    private static func sendAll(_ fd: Int32, _ bytes: [UInt8]) throws(RPCError) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                sent += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                throw .unavailable("cannot write to the server: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Waits up to `timeoutMs` for data and appends what arrives.
    private static func receive(_ fd: Int32, into received: inout ReceiveBuffer, timeoutMs: Int32) throws(RPCError) {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, timeoutMs) > 0 else { return }
        _ = try received.read(from: fd)
    }
}
