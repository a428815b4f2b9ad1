/// The wires a connection may speak: our framed protocol, or standard gRPC over HTTP/2.
public enum WireKind: String, Sendable, Equatable, CaseIterable {
    /// Our framed protocol (docs/PROTOCOL.md), ALPN `mrpc/1`.
    case mrpc
    /// Standard gRPC over HTTP/2, ALPN `h2` (or h2c with prior knowledge).
    case grpc
}

/// One wire's side of a connection: its bytes to calls, and calls' response parts to its bytes.
///
/// A codec knows its wire's framing and nothing of a connection's life: it hands what it decoded
/// to its `ConnectionCore` (a handshake's key, a call's head and request, a cancel) and writes
/// what the core asks (a reply, a stream message, a call's end, GOAWAY, PING). The core keeps
/// every rule both wires share — authentication, admission, deadlines, drain, idle, close — so
/// they are written once. `FramedCodec` (this module) and the gRPC codec (RPCGRPC) are the two.
///
/// Confined to its connection's event loop, like the core.
public protocol WireCodec: AnyObject {
    var wire: WireKind { get }

    /// Decodes what it can of `bytes`: whole units of its framing, stopping before one when the
    /// connection's output passes `outboundLimit` (`ConnectionCore.pendingOutput`), after
    /// `frameLimit` units, while the core awaits a large request, or once the connection closes.
    /// - Returns: the bytes consumed, and how many bytes the next unit needs in all when known
    ///   (0 when unknown, or when it stopped early), so the transport can make room for it.
    func receive(_ bytes: UnsafeRawBufferPointer, outboundLimit: Int, frameLimit: Int) -> (consumed: Int, needed: Int)

    /// Moves what the wire has to send now into the core's `outbound` (HTTP/2's frames; our
    /// protocol writes there directly and has nothing to move).
    func takeOutput()
    /// True when `takeOutput` has something to move.
    var hasPendingOutput: Bool { get }
    /// Response bytes the wire holds unsent for its streams (HTTP/2's flow control): unwritten
    /// output like `outbound`, for backpressure and the slow-consumer check.
    var queuedBytes: Int { get }
    /// Bytes the wire's own state holds for the peer (HPACK tables, stream records), counted in
    /// the memory budget with the connection's input.
    var stateBytes: Int { get }
    /// True once the wire is done with the connection (HTTP/2: its GOAWAY exchange ended, or it
    /// failed): close once the output is written.
    var wantsClose: Bool { get }

    /// A unary call's answer from an encoded message; ends the call OK.
    func writeReply(streamID: UInt32, _ message: ResponseMessage)
    /// A unary call's answer written in place by `write`; ends the call OK.
    func writeReply(streamID: UInt32, _ write: MessageWriter)
    /// One message of a server stream.
    func writeMessage(streamID: UInt32, _ message: ResponseMessage)
    /// A run of stream messages (a fan-out's, queued for this connection), each written when its
    /// stream is live.
    func writeMessages(_ run: ArraySlice<OutgoingPart>, isLive: (UInt32) -> Bool)
    /// A call's end: its error, or OK for a stream. `isStream` says which kind of call ends.
    func writeEnd(streamID: UInt32, error: RPCError?, isStream: Bool)
    /// The core no longer knows `streamID` (answered, refused, cancelled): the codec lets go of
    /// what it kept for it.
    func callRemoved(streamID: UInt32)
    /// GOAWAY naming the last stream the server will finish; `closing` when nothing more will be
    /// finished (the connection closes once it is written) rather than a drain.
    func writeGoaway(lastStreamID: UInt32, error: RPCError, closing: Bool)
    /// A keepalive PING carrying `token` (any frame from the peer answers it).
    func writePing(token: UInt64)
    /// The connection closes for `reason` with no GOAWAY of the core's (a handshake or keepalive
    /// timeout, an end of the wire's own): what the wire says last, if anything. Our protocol
    /// says nothing to a peer that never said HELLO; HTTP/2 peers expect a GOAWAY.
    func writeClosing(_ reason: ConnectionStateMachine.CloseReason)
    /// The connection is gone: the codec lets go of everything it kept for the peer.
    func connectionClosed()
}

extension WireCodec {
    public func writeMessages(_ run: ArraySlice<OutgoingPart>, isLive: (UInt32) -> Bool) {
        for outgoing in run {
            guard case .message(let message) = outgoing.part, isLive(outgoing.streamID) else { continue }
            writeMessage(streamID: outgoing.streamID, message)
        }
    }
}

/// Makes the codec of a wire for a connection that speaks it: what a server that serves the wire
/// is configured with (`ServerEnvironment.grpc`).
public protocol WireCodecFactory: Sendable {
    func makeCodec(for core: ConnectionCore) -> any WireCodec
}

/// Which wire a connection's first bytes speak, so one port serves both.
public enum WireSniffer {
    /// What the first bytes say.
    public enum Verdict: Equatable {
        /// Not enough bytes yet.
        case needMore
        /// Our preface (`MRPC`), or bytes that are nothing else: our codec refuses a bad preface
        /// with a GOAWAY the peer can read.
        case mrpc
        /// HTTP/2's connection preface (`PRI * HTTP/2.0`).
        case http2
        /// An HTTP/1 request line (a method token, a space): answered in HTTP/1, saying what
        /// this port speaks.
        case http1
    }

    /// Bytes that decide: both prefaces differ within them.
    public static let decidingBytes = 4

    /// The verdict on a connection's first bytes.
    public static func identify(_ bytes: UnsafeRawBufferPointer) -> Verdict {
        let mrpc: [UInt8] = Array("MRPC".utf8)
        let http2: [UInt8] = Array("PRI ".utf8)
        let count = min(bytes.count, decidingBytes)
        let head = Array(bytes.prefix(count))
        if head == Array(mrpc.prefix(count)) { return count == decidingBytes ? .mrpc : .needMore }
        if head == Array(http2.prefix(count)) { return count == decidingBytes ? .http2 : .needMore }
        // An HTTP/1 method is a token of capitals ("GET", "POST", "OPTIONS"), then a space.
        var index = 0
        while index < count, (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(head[index]) { index += 1 }
        if index == count { return count == decidingBytes ? .http1 : .needMore }
        return index > 0 && head[index] == UInt8(ascii: " ") ? .http1 : .mrpc
    }
}
