internal import CSystemShims
internal import Glibc
public import RPCCore
public import RPCMessages
public import TLSSupport

/// A socket that has completed the MRPC handshake: connected, TLS established when asked for,
/// preface and HELLO sent, HELLO_ACK received.
///
/// Every client connection starts from one: `ClientConnection` and the lean connections of the
/// load generator, so both connect, time out and report a refused HELLO the same way. A
/// plaintext socket is still blocking; a TLS one is non-blocking. Whoever takes the handshake
/// owns `fd` (and `tls`) and closes it.
public struct ClientHandshake: Sendable {
    /// The connected socket (`TCP_NODELAY`).
    public let fd: Int32
    /// The TLS session over `fd` when the connection speaks TLS: every byte goes through it.
    public let tls: TLSSession?
    /// What the server said in HELLO_ACK.
    public let helloAck: HelloAck
    /// Bytes that arrived after HELLO_ACK: the start of what the server sends next.
    public let leftover: [UInt8]

    /// Connects, establishes TLS when `options.tls` asks for it, sends the preface and HELLO
    /// (accepting deflate when `options.acceptDeflate`), and waits for HELLO_ACK, all within
    /// `options.connectTimeoutMs`.
    /// - Parameter tlsContext: the client context to use (made from `options.tls` when nil): a
    ///   caller opening many connections makes it once.
    /// - Throws: UNAVAILABLE when the server cannot be reached, the TLS handshake fails (the
    ///   message says why: an unknown CA, a name mismatch, a server that does not speak TLS) or
    ///   no HELLO_ACK comes in time; INVALID_ARGUMENT when the TLS files do not load; the
    ///   server's GOAWAY error (e.g. UNAUTHENTICATED) when it refuses the HELLO; a protocol
    ///   violation when it answers with any other frame of the protocol.
    public static func connect(_ options: ClientOptions, tlsContext: TLSContext? = nil) throws(RPCError)
        -> ClientHandshake
    {
        var context = tlsContext
        if context == nil, let configuration = options.tls {
            do throws(TLSError) {
                context = try TLSContext.client(configuration)
            } catch {
                throw .invalidArgument(error.message)
            }
        }
        let fd = options.host.withCString { cshim_connect($0, options.port, Int32(options.connectTimeoutMs)) }
        guard fd >= 0 else {
            throw .unavailable("cannot connect to \(options.host):\(options.port): \(String(cString: strerror(-fd)))")
        }
        _ = cshim_set_nodelay(fd)
        let deadline = monotonicNow() + UInt64(options.connectTimeoutMs) * 1_000_000
        var tls: TLSSession?
        do throws(RPCError) {
            if let context {
                tls = try establishTLS(fd: fd, context: context, options: options, deadline: deadline)
            }
            var out = Preface.bytes
            FrameWriter.hello(
                Hello(
                    apiKey: options.apiKey, clientName: options.clientName,
                    acceptEncodings: options.acceptDeflate ? ["deflate"] : [], appID: options.appID), into: &out)
            try sendAll(fd, tls, out, deadline: deadline)
            var received = ReceiveBuffer()
            while true {
                if let (header, payload) = try received.nextFrame(limit: options.frameLimit) {
                    switch header.type {
                    case .helloAck:
                        return ClientHandshake(
                            fd: fd, tls: tls, helloAck: try HelloAck(fromServer: payload), leftover: received.bytes)
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
                try receive(fd, tls, into: &received, timeoutMs: Int32((deadline - now) / 1_000_000) + 1)
            }
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    /// The TLS handshake on `fd`, made non-blocking for it (and left so), by `deadline`.
    private static func establishTLS(fd: Int32, context: TLSContext, options: ClientOptions, deadline: UInt64)
        throws(RPCError) -> TLSSession
    {
        try establishTLS(
            fd: fd, context: context, host: options.host, port: options.port, timeoutMs: options.connectTimeoutMs,
            deadline: deadline)
    }

    /// The client's side of a TLS handshake on the connected socket `fd`, made non-blocking for it
    /// (and left so), by `deadline` (`timeoutMs` after the connect began, for the message): every
    /// client of ours over TLS starts with it, whatever it speaks inside.
    /// - Throws: UNAVAILABLE naming the host and why (with a hint when the server seems not to
    ///   speak TLS at all).
    public static func establishTLS(
        fd: Int32, context: TLSContext, host: String, port: UInt16, timeoutMs: Int, deadline: UInt64
    ) throws(RPCError) -> TLSSession {
        let session: TLSSession
        do throws(TLSError) {
            session = try context.makeClientSession(fd: fd, host: host)
        } catch {
            throw .unavailable(error.message)
        }
        _ = cshim_set_nonblocking(fd, 1)
        while true {
            let events: Int16
            switch session.handshake() {
            case .complete:
                return session
            case .wantRead:
                events = Int16(POLLIN)
            case .wantWrite:
                events = Int16(POLLOUT)
            case .failed(let error):
                throw .unavailable(describe(error, host: host, port: port))
            }
            let now = monotonicNow()
            guard now < deadline else {
                throw .unavailable("no TLS handshake with \(host):\(port) within \(timeoutMs) ms")
            }
            var poller = pollfd(fd: fd, events: events, revents: 0)
            _ = poll(&poller, 1, Int32((deadline - now) / 1_000_000) + 1)
        }
    }

    /// A handshake failure as a user reads it, with a hint when the server does not seem to
    /// speak TLS at all.
    private static func describe(_ error: TLSError, host: String, port: UInt16) -> String {
        var message = "\(host):\(port): \(error.message)"
        let plaintextSigns = ["wrong version number", "packet length too long", "record layer failure", "http request"]
        if plaintextSigns.contains(where: { error.message.contains($0) }) {
            message +=
                " (does the server speak TLS on this port? a plaintext listener answers the TLS hello with garbage)"
        }
        return message
    }

    private static func sendAll(_ fd: Int32, _ tls: TLSSession?, _ bytes: [UInt8], deadline: UInt64)
        throws(RPCError)
    {
        var sent = 0
        while sent < bytes.count {
            if let tls {
                let result = bytes.withUnsafeBytes {
                    tls.write(from: $0.baseAddress! + sent, count: bytes.count - sent)
                }
                switch result {
                case .bytes(let n):
                    sent += n
                case .wantRead, .wantWrite:
                    let now = monotonicNow()
                    guard now < deadline else { throw .unavailable("cannot write to the server in time") }
                    var poller = pollfd(
                        fd: fd, events: result == .wantRead ? Int16(POLLIN) : Int16(POLLOUT), revents: 0)
                    _ = poll(&poller, 1, Int32((deadline - now) / 1_000_000) + 1)
                case .closed, .failed:
                    throw refusal(tls)
                        ?? .unavailable("cannot write to the server: \(tls.failure?.message ?? "closed")")
                }
                continue
            }
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

    /// The alert a TLS 1.3 server sends after the client's side of the handshake completed (a
    /// client certificate missing or refused), read from what arrived, as a user reads it; nil
    /// when there is none.
    private static func refusal(_ tls: TLSSession) -> RPCError? {
        if tls.failure == nil {
            var scratch = [UInt8](repeating: 0, count: 512)
            _ = scratch.withUnsafeMutableBytes { tls.read(into: $0.baseAddress!, count: $0.count) }
        }
        guard let failure = tls.failure, failure.message.contains("alert") else { return nil }
        var message = "the server refused the TLS connection: " + failure.message
        if failure.message.contains("certificate required") {
            message += " (it asks for a client certificate: give one with its key)"
        }
        return .unavailable(message)
    }

    /// Waits up to `timeoutMs` for data and appends what arrives.
    private static func receive(_ fd: Int32, _ tls: TLSSession?, into received: inout ReceiveBuffer, timeoutMs: Int32)
        throws(RPCError)
    {
        if let tls {
            if !tls.hasBufferedInput {
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, timeoutMs) > 0 else { return }
            }
            // A TLS read that must write first (rare: an answer TLS owes) waits for the socket to
            // be writable, then the next round reads on.
            let needsOutput: Bool
            do throws(RPCError) {
                needsOutput = try received.read(from: tls).needsOutput
            } catch {
                throw refusal(tls) ?? error
            }
            if needsOutput {
                var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&poller, 1, timeoutMs)
            }
            return
        }
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, timeoutMs) > 0 else { return }
        _ = try received.read(from: fd)
    }
}
