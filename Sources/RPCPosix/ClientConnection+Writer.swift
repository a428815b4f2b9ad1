internal import CSystemShims
internal import Glibc
import Synchronization
import TLSSupport

/// The output side. Calls never block on the socket: what it does not take at once waits in
/// `WriterState.output`, and the reader thread, woken through `wakeFD`, writes the rest when
/// `poll` says the socket is writable again.
extension ClientConnection {
    /// Frames waiting for the socket, and the last stream id given out; over TLS, also what the
    /// session waits for (its lock is this state's).
    struct WriterState {
        var lastStreamID: UInt32 = 0
        var output: [UInt8] = []
        /// Bytes of `output` the socket has taken.
        var written = 0
        /// TLS: the last write needs input first (it goes on after the next read).
        var writeNeedsInput = false
        /// TLS: the last read needs the socket writable first.
        var readNeedsOutput = false

        var hasPending: Bool { written < output.count }
        var unwritten: Int { output.count - written }

        /// The socket took all of `output`: empties it, keeping its storage unless it grew past
        /// 1 MiB for a large frame.
        mutating func allWritten() {
            output.removeAll(keepingCapacity: output.capacity <= 1024 * 1024)
            written = 0
        }

        /// The connection is broken: what was not written is dropped (the reader sees the break
        /// and fails every call).
        mutating func dropOutput() {
            output.removeAll()
            written = 0
        }
    }

    /// Unwritten bytes above which new calls fail at once (the server is not reading).
    static let pendingOutputLimit = 64 * 1024 * 1024

    /// Appends a frame to the output and writes what the socket takes now.
    func enqueue(_ encode: (inout [UInt8]) -> Void) {
        let wake = writer.withLock { writer in
            encode(&writer.output)
            return !flush(&writer)
        }
        if wake { wakeReader() }
    }

    /// Writes waiting output until the socket would block; true when nothing is left.
    func flush(_ writer: inout WriterState) -> Bool {
        if let tls { return flush(&writer, through: tls) }
        while writer.written < writer.output.count {
            let n = writer.output.withUnsafeBytes { bytes in
                send(fd, bytes.baseAddress! + writer.written, bytes.count - writer.written, Int32(MSG_NOSIGNAL))
            }
            if n > 0 {
                writer.written += n
            } else if n < 0 && errno == EINTR {
                continue
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                return false
            } else {
                writer.dropOutput()
                return true
            }
        }
        writer.allWritten()
        return true
    }

    /// `flush` over TLS (called under the writer's lock, like every use of the session).
    private func flush(_ writer: inout WriterState, through tls: TLSSession) -> Bool {
        while writer.written < writer.output.count {
            let result = writer.output.withUnsafeBytes { bytes in
                tls.write(from: bytes.baseAddress! + writer.written, count: bytes.count - writer.written)
            }
            switch result {
            case .bytes(let n):
                writer.written += n
            case .wantWrite:
                return false
            case .wantRead:
                writer.writeNeedsInput = true
                return false
            case .closed, .failed:
                writer.dropOutput()
                return true
            }
        }
        writer.allWritten()
        return true
    }

    /// Makes the reader thread's `poll` return, so it also waits for the socket to be writable.
    func wakeReader() {
        _ = cshim_eventfd_signal(wakeFD)
    }
}
