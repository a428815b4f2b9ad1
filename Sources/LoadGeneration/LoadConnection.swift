internal import CSystemShims
internal import Glibc
import ProtoBridge
import RPCCore
import RPCMessages
import RPCPosix
import TLSSupport

/// One load connection: a socket after the handshake, its buffers and calls in flight.
///
/// Over TLS its bytes go through its `TLSSession`: one thread owns the connection, so the
/// session needs no lock.
final class LoadConnection: LoadTransport, @unchecked Sendable {
    // Invariant: used by one thread at a time (opened by the caller, then owned by a LoadThread).
    let fd: Int32
    let tls: TLSSession?
    /// The server's HELLO_ACK: its limits.
    let helloAck: HelloAck
    /// TLS: the last read needs the socket writable first.
    private(set) var readNeedsOutput = false
    var inFlight = 0
    var closed = false
    var nextSend: UInt64 = 0
    var sendTimes: [UInt32: UInt64] = [:]
    private var nextStreamID: UInt32 = 1
    private var output: [UInt8] = []
    private var written = 0
    private let input: UnsafeMutableRawBufferPointer
    private var inputCount = 0

    private init(fd: Int32, tls: TLSSession?, helloAck: HelloAck, leftover: [UInt8]) {
        self.fd = fd
        self.tls = tls
        self.helloAck = helloAck
        input = .allocate(byteCount: 8 * 1024 * 1024, alignment: 16)
        leftover.withUnsafeBytes { input.copyMemory(from: $0) }
        inputCount = leftover.count
        output.reserveCapacity(256 * 1024)
    }

    deinit { input.deallocate() }

    /// Connects and completes the handshake (blocking). The HELLO asks for no compression: the
    /// generator reads only the status of each reply.
    static func open(_ options: ClientOptions, tlsContext: TLSContext?) throws(RPCError) -> LoadConnection {
        var options = options
        options.acceptDeflate = false
        let handshake = try ClientHandshake.connect(options, tlsContext: tlsContext)
        return LoadConnection(
            fd: handshake.fd, tls: handshake.tls, helloAck: handshake.helloAck, leftover: handshake.leftover)
    }

    func appendCall(payload: [UInt8], now: UInt64) {
        let streamID = nextStreamID
        nextStreamID &+= 1
        FrameHeader(length: UInt32(payload.count), type: .call, streamID: streamID).write(to: &output)
        output.append(contentsOf: payload)
        sendTimes[streamID] = now
        inFlight += 1
    }

    /// True while output is waiting for the socket to accept it.
    var writeBlocked: Bool { written < output.count }

    func flush() {
        while written < output.count {
            let n: Int
            if let tls {
                let result = output.withUnsafeBytes {
                    tls.write(from: $0.baseAddress! + written, count: output.count - written)
                }
                guard case .bytes(let count) = result else { break }
                n = count
            } else {
                n = output.withUnsafeBytes {
                    send(fd, $0.baseAddress! + written, output.count - written, Int32(MSG_NOSIGNAL))
                }
            }
            if n > 0 { written += n } else { break }
        }
        if written == output.count {
            output.removeAll(keepingCapacity: true)
            written = 0
        }
    }

    /// Free bytes at the end of the input buffer.
    private var inputRoom: Int { input.count - inputCount }

    /// Reads into the input buffer: bytes read, 0 at EOF, -1 when nothing is available.
    private func readAvailable() -> Int {
        if inputCount == input.count { return -1 }
        if let tls {
            readNeedsOutput = false
            switch tls.read(into: input.baseAddress! + inputCount, count: input.count - inputCount) {
            case .bytes(let n):
                inputCount += n
                return n
            case .wantRead: return -1
            case .wantWrite:
                readNeedsOutput = true
                return -1
            case .closed, .failed: return 0
            }
        }
        let n = Glibc.read(fd, input.baseAddress! + inputCount, input.count - inputCount)
        if n > 0 {
            inputCount += n
            return n
        }
        if n == 0 { return 0 }
        return -1
    }

    /// Calls `body` for each complete frame in the input buffer, then keeps the incomplete rest.
    private func parseFrames(_ body: (UInt8, UInt32, UnsafeRawBufferPointer) -> Void) {
        var offset = 0
        let bytes = UnsafeRawBufferPointer(input)
        while inputCount - offset >= FrameHeader.size {
            let (header, _) = FrameHeader.read(
                from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + FrameHeader.size]))
            let total = FrameHeader.size + Int(header.length)
            guard inputCount - offset >= total else { break }
            body(
                header.type.rawValue, header.streamID,
                UnsafeRawBufferPointer(rebasing: bytes[offset + FrameHeader.size..<offset + total]))
            offset += total
        }
        if offset > 0 {
            let rest = inputCount - offset
            if rest > 0 { input.baseAddress!.copyMemory(from: input.baseAddress! + offset, byteCount: rest) }
            inputCount = rest
        }
    }
    /// The registration is level-triggered, so a read that leaves room in the buffer has drained
    /// the socket for now and ends the turn (no extra read only to see `EAGAIN`). Over TLS a
    /// read returns one record at most, so reads go on while OpenSSL holds input.
    func readReplies(completed: (UInt64, UInt64, () -> String) -> Void, notice: (String) -> Void)
        -> LoadReadResult
    {
        while true {
            let room = inputRoom
            let n = readAvailable()
            if n == 0 { return .ended("the server closed a connection") }
            if n < 0 { return .open }
            let now = monotonicNow()
            parseFrames { type, streamID, payload in
                guard type == FrameType.reply.rawValue, let sent = sendTimes.removeValue(forKey: streamID) else {
                    if type == FrameType.goaway.rawValue { notice("the server sent GOAWAY") }
                    return
                }
                inFlight -= 1
                completed(sent, now) { Self.outcome(payload) }
            }
            if n < room && !(tls?.hasBufferedInput ?? false) { return .open }
        }
    }

    private static func outcome(_ payload: UnsafeRawBufferPointer) -> String {
        guard payload.count >= 4 else { return "MALFORMED_REPLY" }
        let statusLength = Int(BigEndian.readUInt32(payload))
        guard statusLength > 0 else { return "OK" }
        guard statusLength <= payload.count - 4,
            let status = try? Status(serializedBytes: UnsafeRawBufferPointer(rebasing: payload[4..<4 + statusLength]))
        else {
            return "MALFORMED_REPLY"
        }
        let code = StatusCode(rawValue: status.code).name
        return status.errorCode.isEmpty ? code : "\(code) \(status.errorCode)"
    }
}
