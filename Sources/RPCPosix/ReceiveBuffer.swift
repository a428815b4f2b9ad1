internal import Glibc
import ProtoBridge
import RPCCore
import TLSSupport

/// Bytes received from the server and not yet cut into frames.
///
/// The handshake and the connection's reader thread both read into one and take complete frames
/// off its front; a partial frame stays until the rest arrives.
struct ReceiveBuffer {
    /// The bytes of one read. A read that fills it may have left more in the socket.
    static let readSize = 64 * 1024
    /// The most one TLS read returns: a record's plaintext.
    static let tlsReadSize = 16 * 1024

    private(set) var bytes: [UInt8]

    init(_ bytes: [UInt8] = []) {
        self.bytes = bytes
    }

    /// Reads once from `fd` and appends what arrived.
    /// - Returns: the number of bytes read; 0 when the read was interrupted or would block.
    /// - Throws: UNAVAILABLE when the server closed the connection or the read failed.
    mutating func read(from fd: Int32) throws(RPCError) -> Int {
        let start = bytes.count
        bytes.appendZeros(Self.readSize)
        let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + start, Self.readSize) }
        let failure = n < 0 ? errno : 0
        bytes.removeLast(Self.readSize - max(n, 0))
        if n == 0 { throw .unavailable("the server closed the connection") }
        if n < 0 {
            if failure == EINTR || failure == EAGAIN || failure == EWOULDBLOCK { return 0 }
            throw .unavailable("cannot read from the server: \(String(cString: strerror(failure)))")
        }
        return n
    }

    /// Reads once through `session` (decrypted bytes: at most one TLS record) and appends them.
    /// - Returns: the number of bytes read, and whether OpenSSL needs the socket writable before
    ///   it can read on; (0, false) when it needs more from the socket.
    /// - Throws: UNAVAILABLE when the server closed the connection or TLS failed.
    mutating func read(from session: TLSSession) throws(RPCError) -> (count: Int, needsOutput: Bool) {
        let start = bytes.count
        bytes.appendZeros(Self.tlsReadSize)
        let result = bytes.withUnsafeMutableBytes {
            session.read(into: $0.baseAddress! + start, count: Self.tlsReadSize)
        }
        var n = 0
        if case .bytes(let count) = result { n = count }
        bytes.removeLast(Self.tlsReadSize - n)
        switch result {
        case .bytes: return (n, false)
        case .wantRead: return (0, false)
        case .wantWrite: return (0, true)
        case .closed: throw .unavailable("the server closed the connection")
        case .failed:
            throw .unavailable("cannot read from the server: \(session.failure?.message ?? "TLS failed")")
        }
    }

    /// Removes and returns the first complete frame, if there is one.
    /// - Throws: RESOURCE_EXHAUSTED (`ERR_MESSAGE_TOO_LARGE`) when a frame's header announces more
    ///   than `limit` bytes: refused from the header alone, before the body is read.
    mutating func nextFrame(limit: Int) throws(RPCError) -> (header: FrameHeader, payload: [UInt8])? {
        guard bytes.count >= FrameHeader.size else { return nil }
        let header = bytes.withUnsafeBytes { FrameHeader.read(from: $0).header }
        guard Int(header.length) <= limit else {
            throw .messageTooLarge("the server sent a frame of \(header.length) bytes (limit \(limit))")
        }
        let total = FrameHeader.size + Int(header.length)
        guard bytes.count >= total else { return nil }
        let payload = Array(bytes[FrameHeader.size..<total])
        bytes.removeFirst(total)
        return (header, payload)
    }
}
