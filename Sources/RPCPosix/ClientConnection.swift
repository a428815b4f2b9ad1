internal import CSystemShims
internal import Glibc
public import RPCCore
public import RPCMessages
import Synchronization
import TLSSupport

/// One client connection: many concurrent calls and streams over one socket.
///
/// Calls may be started from any thread. Stream ids are allocated and frames written under one
/// lock, so ids go out increasing; a reader thread matches replies to calls by stream id,
/// inflates compressed bodies and enforces deadlines (a call past its deadline fails with
/// DEADLINE_EXCEEDED and the server gets a CANCEL).
///
/// The type is split by concern: `ClientHandshake` connects; `+Calls` holds the calling styles,
/// all over one core (`start`); `+PendingCall` what is kept per call; `+Writer` the output that
/// calls leave for the socket; `+Reader` the reader thread and deadlines; `+Frames` what each
/// frame from the server does to its call; `+Inflaters` the reader's inflate contexts.
///
/// Over TLS, the one `TLSSession` is used by the reader thread and by the callers that write,
/// and OpenSSL forbids two threads in one session at once: every TLS read and write happens
/// under the writer's lock (a read never blocks — the socket is non-blocking and the reader
/// polls it first — so the lock is held for one record's work at a time). The plaintext path
/// reads without the lock, as before.
public final class ClientConnection: Sendable {
    /// What the server said in HELLO_ACK.
    public let helloAck: HelloAck
    public let options: ClientOptions
    // Internal rather than private only so the `ClientConnection+…` files reach them; nothing else
    // in the module touches them.
    let fd: Int32
    /// The TLS session over `fd`, nil for plaintext. Invariant: used only under `writer`'s lock.
    let tls: TLSSession?
    /// Wakes the reader thread's `poll` when output waits for the socket to become writable.
    let wakeFD: Int32
    let writer = Mutex(WriterState())
    let state = Mutex<State>(State())
    let inflaters = Inflaters()

    /// The calls in flight and whether new ones may start.
    struct State {
        var calls: [UInt32: PendingCall] = [:]
        /// Why the connection is gone; set once, by the reader thread as it ends.
        var closed: RPCError?
        /// The last stream id the server will run, from its GOAWAY; no call starts after one.
        var goawayLastStream: UInt32?
    }

    /// A raw stream message: the body after inflation and its size on the wire.
    public struct StreamMessage: Sendable {
        public let streamID: UInt32
        public let body: [UInt8]
        public let wireBytes: Int
        public let compressed: Bool
    }

    /// Connects, sends the preface and HELLO, and waits for HELLO_ACK (`ClientHandshake`).
    /// - Throws: UNAVAILABLE when the server cannot be reached; the server's GOAWAY error
    ///   (e.g. UNAUTHENTICATED) when it refuses the handshake.
    public static func connect(_ options: ClientOptions) throws(RPCError) -> ClientConnection {
        let handshake = try ClientHandshake.connect(options)
        let connection = ClientConnection(handshake, options: options)
        connection.startReader(leftover: handshake.leftover)
        return connection
    }

    private init(_ handshake: ClientHandshake, options: ClientOptions) {
        fd = handshake.fd
        tls = handshake.tls
        _ = cshim_set_nonblocking(fd, 1)
        wakeFD = cshim_eventfd()
        self.options = options
        helloAck = handshake.helloAck
    }

    deinit {
        Glibc.close(fd)
        Glibc.close(wakeFD)
    }

    /// True while new calls can be started on this connection.
    public var isUsable: Bool { state.withLock { $0.closed == nil && $0.goawayLastStream == nil } }

    /// Calls in flight.
    public var pendingCallCount: Int { state.withLock { $0.calls.count } }

    /// Closes the connection; pending calls fail with UNAVAILABLE.
    public func close() {
        if let tls { writer.withLock { _ in tls.shutdown() } }
        shutdown(fd, Int32(SHUT_RDWR))
    }

    /// The TLS version, cipher suite and ALPN protocol negotiated ("TLSv1.3 TLS_AES_128_GCM_SHA256
    /// mrpc/1"), nil for plaintext.
    public var tlsDescription: String? {
        guard let tls else { return nil }
        return writer.withLock { _ in
            [tls.protocolVersion, tls.cipherSuite, tls.applicationProtocol ?? ""].filter { !$0.isEmpty }
                .joined(separator: " ")
        }
    }
}
