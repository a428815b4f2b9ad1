internal import CSystemShims
internal import Glibc
import HTTP2Support
import RPCCore
import RPCGRPC
import RPCPosix

/// One gRPC load connection: HTTP/2 with prior knowledge (h2c) on a non-blocking socket, each
/// call a stream — HEADERS, one DATA frame with the length-prefixed request and END_STREAM —
/// completed by its trailers (or a trailers-only response, a reset, the stream's end).
///
/// nghttp2 does HTTP/2's part (SETTINGS, PING, HPACK, WINDOW_UPDATEs as responses are fed in
/// and output taken); the request header block is built once for the run and shared.
final class GRPCLoadConnection: LoadTransport, @unchecked Sendable {
    // Invariant: used by one thread at a time (opened by the caller, then owned by a LoadThread).
    let fd: Int32
    /// "HOST:PORT", the `:authority` of the requests and the errors' subject.
    let authority: String
    private let http2 = HTTP2ClientSession()
    private let headers: HTTP2HeaderBlock
    var inFlight = 0
    var closed = false
    var nextSend: UInt64 = 0
    let readNeedsOutput = false
    /// Calls in flight by stream: when each was submitted and the response bytes seen so far.
    private var calls: [Int32: (sent: UInt64, responseBytes: Int)] = [:]
    /// Why the connection can no longer be used, once it cannot; its socket is shut down then so
    /// that the thread's next read ends it.
    private var failure: String?
    private var output: [UInt8] = []
    private var written = 0
    private let input: UnsafeMutableRawBufferPointer

    private init(fd: Int32, authority: String, headers: HTTP2HeaderBlock) {
        self.fd = fd
        self.authority = authority
        self.headers = headers
        input = .allocate(byteCount: 256 * 1024, alignment: 16)
        output.reserveCapacity(256 * 1024)
    }

    deinit { input.deallocate() }

    /// The request header block every call of the run sends: gRPC's required fields, then the
    /// caller's (`authorization`, `x-on-behalf-of`, the ids, `-H` fields) as rpc-probe's gRPC
    /// client sends them, and the deadline as `grpc-timeout`.
    static func requestHeaders(_ configuration: LoadConfiguration) -> HTTP2HeaderBlock {
        let call = configuration.callOptions
        var headers = GRPCRequestHeaders(
            path: configuration.path, authority: address(configuration.client))
        headers.timeoutMs = UInt64(call.timeoutMs)
        headers.apiKey = configuration.client.apiKey
        headers.onBehalfOf = call.onBehalfOf
        headers.requestID = call.requestID
        headers.idempotencyKey = call.idempotencyKey
        headers.custom = call.metadata
        return headers.block
    }

    private static func address(_ options: ClientOptions) -> String {
        GRPCRequestHeaders.authority(host: options.host, port: options.port)
    }

    /// Connects and exchanges HTTP/2's prefaces (blocking, within the connect timeout): on
    /// return the server's SETTINGS are known (`maxConcurrentStreams`).
    /// - Throws: UNAVAILABLE when the server cannot be reached or does not answer as HTTP/2.
    static func open(_ options: ClientOptions, headers: HTTP2HeaderBlock) throws(RPCError) -> GRPCLoadConnection {
        let authority = address(options)
        let fd = options.host.withCString { cshim_connect($0, options.port, Int32(options.connectTimeoutMs)) }
        guard fd >= 0 else {
            throw .unavailable("cannot connect to \(authority): \(String(cString: strerror(-fd)))")
        }
        _ = cshim_set_nodelay(fd)
        _ = cshim_set_nonblocking(fd, 1)
        let connection = GRPCLoadConnection(fd: fd, authority: authority, headers: headers)
        do throws(RPCError) {
            try connection.awaitServerSettings(
                deadline: monotonicNow() + UInt64(options.connectTimeoutMs) * 1_000_000,
                timeoutMs: options.connectTimeoutMs)
        } catch {
            close(fd)
            throw error
        }
        return connection
    }

    /// Sends our preface and reads until the server's first frame, its SETTINGS, is all in.
    private func awaitServerSettings(deadline: UInt64, timeoutMs: Int) throws(RPCError) {
        var received = 0
        while true {
            let first = http2.firstBytesReceived
            if first.count >= 9 {
                // A frame header: 24-bit length, type, flags, stream id; SETTINGS is type 4 on stream 0.
                guard first[3] == 0x04, first[5...8].allSatisfy({ $0 == 0 }) else {
                    throw .unavailable(
                        "\(authority) is not a gRPC listener: its first bytes are not HTTP/2's SETTINGS frame "
                            + "(bench --grpc needs the gRPC listener, moderation-server --grpc-listen)")
                }
                let length = Int(first[0]) << 16 | Int(first[1]) << 8 | Int(first[2])
                if received >= 9 + length { break }
            }
            if let reason = http2.connectionError { throw .unavailable("\(authority): \(reason)") }
            http2.takeOutput(into: &output)
            flush()
            let now = monotonicNow()
            guard now < deadline else {
                throw .unavailable("\(authority): no HTTP/2 SETTINGS from the server within \(timeoutMs) ms")
            }
            var poller = pollfd(
                fd: fd, events: Int16(POLLIN) | (writeBlocked ? Int16(POLLOUT) : 0), revents: 0)
            guard poll(&poller, 1, Int32((deadline - now) / 1_000_000) + 1) > 0,
                poller.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0
            else { continue }
            let n = Glibc.read(fd, input.baseAddress!, input.count)
            if n == 0 {
                throw .unavailable(
                    "\(authority) closed the connection without answering HTTP/2's preface: it does not seem to be "
                        + "a gRPC listener (moderation-server --grpc-listen)")
            }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { continue }
                throw .unavailable("\(authority): cannot read from the server: \(String(cString: strerror(errno)))")
            }
            received += n
            _ = http2.receive(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(input)[0..<n]))
        }
        // The SETTINGS acknowledgement goes out with the first calls.
    }

    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS: the most calls this connection may have in flight.
    var maxConcurrentStreams: Int { Int(min(http2.peerMaxConcurrentStreams, UInt32(Int32.max))) }

    func appendCall(payload: [UInt8], now: UInt64) {
        guard failure == nil else { return }
        do throws(HTTP2Error) {
            let id = try http2.submitRequest(headers: headers)
            try http2.sendData(streamID: id, bytes: payload)
            try http2.endRequest(streamID: id)
            calls[id] = (now, 0)
            inFlight += 1
        } catch {
            fail("cannot start a call: \(error.message)")
        }
    }

    /// True while output is waiting for the socket to accept it.
    var writeBlocked: Bool { written < output.count }

    func flush() {
        for event in http2.takeOutput(into: &output) {
            if case .connectionError(let reason) = event { fail("\(authority): \(reason)") }
        }
        while written < output.count {
            let n = output.withUnsafeBytes {
                send(fd, $0.baseAddress! + written, output.count - written, Int32(MSG_NOSIGNAL))
            }
            if n > 0 { written += n } else { break }
        }
        if written == output.count {
            output.removeAll(keepingCapacity: true)
            written = 0
        }
    }

    /// The registration is level-triggered, so a read that leaves room in the buffer has drained
    /// the socket for now and ends the turn.
    func readReplies(completed: (UInt64, UInt64, () -> String) -> Void, notice: (String) -> Void)
        -> LoadReadResult
    {
        while true {
            if let failure { return .ended(failure) }
            let n = Glibc.read(fd, input.baseAddress!, input.count)
            if n == 0 { return .ended("the server closed a connection") }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { return .open }
                return .ended("\(authority): cannot read from the server: \(String(cString: strerror(errno)))")
            }
            let events = http2.receive(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(input)[0..<n]))
            let now = monotonicNow()
            for event in events {
                switch event {
                case .response(let id, let headers, let endStream):
                    let status = headers.first(named: ":status") ?? ""
                    if status != "200" {
                        finish(id, GRPCStatusFields.error(httpStatus: status), now: now, completed)
                    } else if endStream {
                        // Trailers-only: an error, or an OK without the response message.
                        finish(id, GRPCStatusFields.error(from: headers), now: now, completed)
                    }
                case .data(let id, let bytes, _):
                    calls[id]?.responseBytes += bytes.count
                case .trailers(let id, let headers):
                    finish(id, GRPCStatusFields.error(from: headers), now: now, completed)
                case .streamReset(let id, let code):
                    finish(id, GRPCStatusFields.error(reset: code), now: now, completed)
                case .streamClosed(let id, _):
                    finish(id, .unavailable("the stream closed before the call's status arrived"), now: now, completed)
                case .goaway(let lastStreamID, let code):
                    notice("the server sent GOAWAY (\(code), last stream \(lastStreamID))")
                case .connectionError(let reason):
                    fail("\(authority): \(reason)")
                case .request, .endStream:
                    break
                }
            }
            if let failure { return .ended(failure) }
            if n < input.count { return .open }
        }
    }

    /// Completes the call on stream `id` (once; later events of a finished stream are ignored).
    private func finish(
        _ id: Int32, _ error: RPCError?, now: UInt64, _ completed: (UInt64, UInt64, () -> String) -> Void
    ) {
        guard let call = calls.removeValue(forKey: id) else { return }
        inFlight -= 1
        completed(call.sent, now) {
            guard let error else {
                // A unary call's OK carries its one response message (5-byte prefix and body).
                return call.responseBytes >= 5 ? "OK" : "MALFORMED_REPLY"
            }
            return error.errorCode.isEmpty ? error.code.name : "\(error.code.name) \(error.errorCode)"
        }
    }

    /// Marks the connection failed and shuts its socket down, so that the thread's next read
    /// (the socket turns readable) ends it with `reason`.
    private func fail(_ reason: String) {
        guard failure == nil else { return }
        failure = reason
        shutdown(fd, Int32(SHUT_RDWR))
    }
}
