/// What the transport reports besides calls: failures to accept, connections refused or cut,
/// failed handshakes. Each is a counter on `/metrics`; none is logged line by line, since a
/// hostile peer can cause any of them as fast as it can connect.
public enum TransportEvent: Sendable, Equatable {
    /// Why `accept` failed.
    public enum AcceptFailure: Sendable, Equatable, CaseIterable {
        /// EMFILE: the process has as many descriptors open as its limit allows.
        case processDescriptors
        /// ENFILE: the system's table of open files is full.
        case systemDescriptors
        /// ENOBUFS, ENOMEM: the kernel is short of memory for the socket.
        case kernelMemory
    }

    /// Why a connection was refused.
    public enum Refusal: Sendable, Equatable, CaseIterable {
        /// The server already had its maximum of connections (`maxConnections`).
        case serverFull
        /// The connection's app already had its maximum (`AppConnections`).
        case appFull
        /// Accepted with the descriptor kept in reserve, then closed at once: the process was out
        /// of descriptors.
        case outOfDescriptors
        /// The client spoke another protocol than the port's (HTTP/1): it was told so in its own
        /// protocol.
        case protocolMismatch
        /// The memory budget had no room for one more TLS handshake (a flood of handshakes that
        /// never finish).
        case memoryBudget
    }

    /// Why the server closed a connection it had served.
    public enum Cut: Sendable, Equatable, CaseIterable {
        /// The memory budget was spent and this connection held the most unwritten output or the
        /// largest partial frame: a slow consumer.
        case memoryBudget
        /// A frame began and its rest did not arrive within the frame timeout.
        case frameTimeout
    }

    /// Why a connection's handshake was refused before it carried a call (what stands for a
    /// handshake on the gRPC listener: the HTTP/2 preface, and its requests' API keys).
    public enum HandshakeRefusal: Sendable, Equatable, CaseIterable {
        /// The first bytes are not the protocol's preface: not MRPC's magic, a protocol version
        /// the server does not speak, reserved bytes set; on the gRPC listener, not HTTP/2's
        /// connection preface (an HTTP/1 request among them).
        case badPreface
        /// After a good preface, something other than a HELLO the server can read: another
        /// frame first, a HELLO over its size limit, a HELLO that does not decode (MRPC only).
        case badHello
        /// No HELLO (on the gRPC listener: no request) within the handshake timeout.
        case timeout
    }

    case acceptFailed(AcceptFailure)
    case connectionRefused(Refusal)
    /// A HELLO (on the gRPC listener, a request) with a wrong or missing API key; `logged` is
    /// false when the throttle kept it out of the log.
    case authenticationFailed(WireKind, logged: Bool)
    /// A handshake refused for another reason than the key (`authenticationFailed`).
    case handshakeRefused(HandshakeRefusal, WireKind)
    /// The transport's own handshake beneath the protocol (TLS) failed, or a client spoke
    /// plaintext to a listener that wants it; `logged` as for `authenticationFailed`.
    case transportHandshakeFailed(logged: Bool)
    case connectionCut(Cut)
}
