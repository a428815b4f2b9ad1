internal import CSystemShims
internal import Glibc
import TLSSupport

/// Where a server connection's bytes cross its socket: as they are, or through TLS.
///
/// The plaintext case is exactly the `read` and `send` the transport always made; TLS adds one
/// switch per read and per write. Either way the socket stays non-blocking and the connection
/// stays on its loop: TLS only changes what "would block" means, since a TLS read may have to
/// write (a handshake message, an alert) and a write may have to read.
enum ConnectionIO {
    case plain(Int32)
    case tls(TLSSession)

    /// What a read or a send did.
    enum Outcome {
        case bytes(Int)
        /// Nothing until the socket is ready again in the same direction.
        case wouldBlock
        /// TLS: nothing until the socket is ready in the other direction (a read that must
        /// write first, a write that must read first).
        case needsOtherDirection
        /// The peer ended the connection.
        case closed
        case failed
    }

    @inline(__always)
    func read(into buffer: UnsafeMutableRawPointer, count: Int) -> Outcome {
        switch self {
        case .plain(let fd):
            while true {
                let n = Glibc.read(fd, buffer, count)
                if n > 0 { return .bytes(n) }
                if n == 0 { return .closed }
                if errno == EINTR { continue }
                return errno == EAGAIN || errno == EWOULDBLOCK ? .wouldBlock : .failed
            }
        case .tls(let session):
            switch session.read(into: buffer, count: count) {
            case .bytes(let n): return .bytes(n)
            case .wantRead: return .wouldBlock
            case .wantWrite: return .needsOtherDirection
            case .closed: return .closed
            case .failed: return .failed
            }
        }
    }

    @inline(__always)
    func send(from buffer: UnsafeRawPointer, count: Int) -> Outcome {
        switch self {
        case .plain(let fd):
            while true {
                let n = Glibc.send(fd, buffer, count, Int32(MSG_NOSIGNAL))
                if n > 0 { return .bytes(n) }
                if n < 0 && errno == EINTR { continue }
                return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? .wouldBlock : .failed
            }
        case .tls(let session):
            switch session.write(from: buffer, count: count) {
            case .bytes(let n): return .bytes(n)
            case .wantWrite: return .wouldBlock
            case .wantRead: return .needsOtherDirection
            case .closed: return .closed
            case .failed: return .failed
            }
        }
    }

    /// The TLS session, nil for plaintext.
    var session: TLSSession? {
        if case .tls(let session) = self { return session }
        return nil
    }
}
