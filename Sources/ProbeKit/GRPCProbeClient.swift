internal import CSystemShims
internal import Glibc
import HTTP2Support
import ProtoBridge
import RPCCore
import RPCGRPC
import RPCMessages
import RPCPosix

/// rpc-probe's gRPC client (`--grpc`): one HTTP/2 connection (h2c with prior knowledge) on a
/// plain socket, driven on the calling thread — a verb starts a call, sends its messages and
/// pulls responses with `next`, which does the I/O until something for that call arrives.
///
/// Blocking and single-threaded on purpose: the probe makes a few calls one after another, and a
/// pull loop keeps the deadline, cancellation and the end of a stream in one place. Calls may
/// overlap (reflection keeps one stream open while it asks several questions).
final class GRPCProbeClient {
    /// "HOST:PORT" as connected to (`:authority`, and the errors).
    let authority: String
    private let fd: Int32
    private let http2 = HTTP2ClientSession()
    private let maxMessageBytes: Int
    private var calls: [Int32: CallState] = [:]
    /// Output taken from nghttp2 and not yet written (the socket is non-blocking).
    private var unsent: [UInt8] = []
    /// Set once the connection is unusable: every open call and every new one fails with it.
    private var failure: RPCError?

    /// A response message: its bytes (inflated), and what it took on the wire.
    struct Message {
        var bytes: [UInt8]
        /// Bytes of the length-prefixed message on the wire (prefix included).
        var wireBytes: Int
        /// The name of its `grpc-encoding` when it came compressed.
        var encoding: String?
    }

    private final class CallState {
        var reader = GRPCMessageReader(side: "response")
        var messages: [Message] = []
        /// The response's `grpc-encoding` and its inflater.
        var encoding: String?
        var inflater: Inflater?
        var sawHeaders = false
        /// nil while running; `.some(nil)` after OK.
        var end: RPCError??
        var deadline: UInt64?
    }

    private init(fd: Int32, authority: String, maxMessageBytes: Int) {
        self.fd = fd
        self.authority = authority
        self.maxMessageBytes = maxMessageBytes
    }

    deinit {
        try? http2.submitGoaway()
        http2.takeOutput(into: &unsent)
        _ = unsent.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        Glibc.close(fd)
    }

    // MARK: Connecting

    /// Connects and exchanges HTTP/2's prefaces within `timeoutMs`.
    /// - Throws: UNAVAILABLE when the server cannot be reached or does not answer as an HTTP/2
    ///   server; the message says what it seems to be instead (our framed MRPC listener, an
    ///   HTTP/1 server).
    static func connect(host: String, port: UInt16, timeoutMs: Int, maxMessageBytes: Int) throws(RPCError)
        -> GRPCProbeClient
    {
        let address = GRPCRequestHeaders.authority(host: host, port: port)
        let fd = host.withCString { cshim_connect($0, port, Int32(timeoutMs)) }
        guard fd >= 0 else {
            throw .unavailable("cannot connect to \(address): \(String(cString: strerror(-fd)))")
        }
        _ = cshim_set_nodelay(fd)
        _ = cshim_set_nonblocking(fd, 1)
        let client = GRPCProbeClient(fd: fd, authority: address, maxMessageBytes: maxMessageBytes)
        try client.awaitServerPreface(deadline: monotonicNow() + UInt64(timeoutMs) * 1_000_000, timeoutMs: timeoutMs)
        return client
    }

    /// Sends our preface and waits for the server's first frame, which must be SETTINGS: the one
    /// sure sign of an HTTP/2 server, and the place to tell which listener it is when it is not.
    private func awaitServerPreface(deadline: UInt64, timeoutMs: Int) throws(RPCError) {
        while http2.firstBytesReceived.count < 9 {
            let now = monotonicNow()
            guard now < deadline else {
                throw .unavailable("\(authority): no HTTP/2 SETTINGS from the server within \(timeoutMs) ms")
            }
            do throws(RPCError) {
                try pumpOnce(timeoutMs: Int32((deadline - now) / 1_000_000) + 1)
            } catch {
                readLeftover()
                throw Self.notGRPC(authority, firstBytes: http2.firstBytesReceived, closed: error)
            }
            if let failure, http2.firstBytesReceived.count < 9 {
                throw Self.notGRPC(authority, firstBytes: http2.firstBytesReceived, closed: failure)
            }
        }
        let first = http2.firstBytesReceived
        // A frame header: 24-bit length, type, flags, stream id; SETTINGS is type 4 on stream 0.
        guard first[3] == 0x04, first[5...8].allSatisfy({ $0 == 0 }) else {
            throw Self.notGRPC(authority, firstBytes: first, closed: nil)
        }
        if let failure { throw failure }
    }

    /// After a failed write, what the server sent before it closed (a framed GOAWAY says which
    /// listener this is), if it is still there to read.
    private func readLeftover() {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 100) > 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
        if n > 0 { _ = buffer.withUnsafeBytes { http2.receive(UnsafeRawBufferPointer(rebasing: $0[0..<n])) } }
    }

    /// What a peer that did not answer HTTP/2's preface with SETTINGS seems to be.
    static func notGRPC(_ authority: String, firstBytes: [UInt8], closed: RPCError?) -> RPCError {
        let hint =
            "; --grpc needs the gRPC listener (moderation-server --grpc-listen, 127.0.0.1:7601 by default)"
        if firstBytes.count >= FrameHeader.size {
            let (header, _) = firstBytes.withUnsafeBytes { FrameHeader.read(from: $0) }
            if header.type == .goaway, header.streamID == 0 {
                let payload = Array(firstBytes.dropFirst(FrameHeader.size).prefix(Int(header.length)))
                let reason = (try? Goaway(serializedBytes: payload))?.status?.message
                return .unavailable(
                    "\(authority) is not a gRPC listener: it answered HTTP/2's preface with a GOAWAY of rpc-probe's "
                        + "own framed protocol (MRPC)\(reason.map { ": \($0)" } ?? ""), so it is the framed listener "
                        + "(moderation-server --listen): drop --grpc to speak to it, or give the gRPC listener's "
                        + "address (--grpc-listen, 127.0.0.1:7601 by default)")
            }
        }
        let text = String(decoding: firstBytes.prefix { $0 != 13 && $0 != 10 }, as: UTF8.self)
        if text.hasPrefix("HTTP/1.") {
            return .unavailable("\(authority) is not a gRPC listener: it answered in HTTP/1 (\"\(text)\")" + hint)
        }
        if firstBytes.isEmpty {
            return .unavailable(
                "\(authority) closed the connection without answering HTTP/2's preface (\(closed?.message ?? "no reply")): "
                    + "it does not seem to be a gRPC listener" + hint)
        }
        return .unavailable(
            "\(authority) is not a gRPC listener: its first bytes are not HTTP/2's SETTINGS frame" + hint)
    }

    /// True when `host:port` answers HTTP/2's preface with SETTINGS: asked after our framed
    /// handshake failed, to tell a user who forgot `--grpc` that this is the gRPC listener.
    static func answersHTTP2(host: String, port: UInt16, timeoutMs: Int) -> Bool {
        (try? connect(host: host, port: port, timeoutMs: timeoutMs, maxMessageBytes: 1024)) != nil
    }

    // MARK: Calls

    /// Request metadata beyond the method: who calls, for whom, the call's ids and custom fields.
    struct Metadata {
        /// Sent as `authorization: Bearer KEY` (the key as given: `APP_ID:KEY` or bare).
        var apiKey = ""
        var onBehalfOf = ""
        var requestID = ""
        var idempotencyKey = ""
        /// `-H` fields; names are lowercased (HTTP/2 allows no capitals).
        var custom: [String: String] = [:]
        /// Ask for gzip- or deflate-compressed responses.
        var acceptCompressed = false
    }

    /// Opens a call (the request's headers); its messages follow with `send`.
    /// - Parameter timeoutMs: the deadline, sent as `grpc-timeout` and kept here too (0: none).
    func start(path: String, metadata: Metadata, timeoutMs: UInt32) throws(RPCError) -> Int32 {
        if let failure { throw failure }
        var headers = GRPCRequestHeaders(path: path, authority: authority)
        headers.timeoutMs = UInt64(timeoutMs)
        headers.acceptCompressed = metadata.acceptCompressed
        headers.apiKey = metadata.apiKey
        headers.onBehalfOf = metadata.onBehalfOf
        headers.requestID = metadata.requestID
        headers.idempotencyKey = metadata.idempotencyKey
        headers.custom = metadata.custom
        let id: Int32
        do throws(HTTP2Error) {
            id = try http2.submitRequest(headers: headers.block)
        } catch {
            throw .internal("cannot start the call: \(error.message)")
        }
        let call = CallState()
        if timeoutMs > 0 { call.deadline = monotonicNow() + UInt64(timeoutMs) * 1_000_000 }
        calls[id] = call
        return id
    }

    /// Sends one request message (length-prefixed, uncompressed); `end` closes the request side.
    func send(_ call: Int32, _ message: [UInt8], end: Bool) throws(RPCError) {
        do throws(HTTP2Error) {
            try http2.sendData(streamID: call, bytes: GRPCMessageReader.frame(message, compressed: false))
            if end { try http2.endRequest(streamID: call) }
        } catch {
            // The stream already ended (the server answered early): `next` reports how.
            if calls[call]?.end == nil { throw .internal("cannot send on the call: \(error.message)") }
        }
    }

    /// The call's next response message, or nil when it ended OK.
    /// - Throws: its error status (a trailers-only refusal, the trailers' error, a reset, the
    ///   connection's end, the client-side deadline).
    func next(_ id: Int32) throws(RPCError) -> Message? {
        guard let call = calls[id] else { return nil }
        while true {
            if !call.messages.isEmpty { return call.messages.removeFirst() }
            if let end = call.end {
                calls[id] = nil
                if let end { throw end }
                return nil
            }
            var wait: Int32 = -1
            if let deadline = call.deadline {
                let now = monotonicNow()
                guard now < deadline else {
                    cancel(id)
                    throw .deadlineExceeded("the call's deadline passed (client side)")
                }
                wait = Int32(min((deadline - now) / 1_000_000 + 1, 60_000))
            }
            do throws(RPCError) {
                try pumpOnce(timeoutMs: wait)
            } catch {
                failAll(error)
            }
        }
    }

    /// A unary call: one request, the one response.
    func unary(path: String, body: [UInt8], metadata: Metadata, timeoutMs: UInt32) throws(RPCError) -> Message {
        let id = try start(path: path, metadata: metadata, timeoutMs: timeoutMs)
        try send(id, body, end: true)
        guard let response = try next(id) else {
            throw RPCError.internal("the server ended the call with OK but sent no response message")
        }
        if try next(id) != nil {
            cancel(id)
            throw RPCError.internal("the server sent more than one response message to a unary call")
        }
        return response
    }

    /// Cancels the call (RST_STREAM CANCEL) and forgets it.
    func cancel(_ id: Int32) {
        guard calls.removeValue(forKey: id) != nil else { return }
        try? http2.resetStream(streamID: id, errorCode: .cancel)
        try? pumpOnce(timeoutMs: 0)
    }

    // MARK: I/O

    /// Writes what HTTP/2 has to send, waits up to `timeoutMs` (-1: no limit) for input or room
    /// to write, and feeds what arrived.
    private func pumpOnce(timeoutMs: Int32) throws(RPCError) {
        handle(http2.takeOutput(into: &unsent))
        try flush()
        var poller = pollfd(fd: fd, events: Int16(POLLIN) | (unsent.isEmpty ? 0 : Int16(POLLOUT)), revents: 0)
        let ready = poll(&poller, 1, timeoutMs)
        if ready < 0 && errno != EINTR {
            throw .unavailable("\(authority): poll failed: \(String(cString: strerror(errno)))")
        }
        guard ready > 0 else { return }
        if poller.revents & Int16(POLLOUT) != 0 { try flush() }
        if poller.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            if n == 0 { throw .unavailable("\(authority): the server closed the connection") }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { return }
                throw .unavailable("\(authority): cannot read from the server: \(String(cString: strerror(errno)))")
            }
            handle(buffer.withUnsafeBytes { http2.receive(UnsafeRawBufferPointer(rebasing: $0[0..<n])) })
            // Acknowledgements and WINDOW_UPDATEs go out at once.
            handle(http2.takeOutput(into: &unsent))
            try flush()
        }
    }

    private func flush() throws(RPCError) {
        while !unsent.isEmpty {
            // MSG_NOSIGNAL: a server that closes on our preface must be an error, not SIGPIPE.
            let n = unsent.withUnsafeBytes { Glibc.send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { return }
                throw .unavailable("\(authority): cannot write to the server: \(String(cString: strerror(errno)))")
            }
            unsent.removeFirst(n)
        }
    }

    private func handle(_ events: [HTTP2Event]) {
        for event in events {
            switch event {
            case .response(let id, let headers, let endStream):
                guard let call = calls[id] else { continue }
                responseHeaders(headers, endStream: endStream, of: call)
            case .data(let id, let bytes, _):
                guard let call = calls[id], call.end == nil else { continue }
                received(bytes, on: call, id: id)
            case .trailers(let id, let headers):
                guard let call = calls[id], call.end == nil else { continue }
                call.end = .some(GRPCStatusFields.error(from: headers))
            case .streamReset(let id, let code):
                guard let call = calls[id], call.end == nil else { continue }
                call.end = .some(GRPCStatusFields.error(reset: code))
            case .streamClosed(let id, _):
                guard let call = calls[id], call.end == nil else { continue }
                call.end = .some(.unavailable("the stream closed before the call's status arrived"))
            case .goaway(let lastStreamID, let code):
                for (id, call) in calls where id > lastStreamID && call.end == nil {
                    call.end = .some(
                        .unavailable("the server went away (GOAWAY \(code)) before running the call; it may be retried")
                    )
                }
            case .connectionError(let reason):
                failAll(.unavailable("\(authority): \(reason)"))
            case .request, .endStream:
                break
            }
        }
    }

    private func responseHeaders(_ headers: HTTP2HeaderBlock, endStream: Bool, of call: CallState) {
        let status = headers.first(named: ":status") ?? ""
        guard status == "200" else {
            call.end = .some(GRPCStatusFields.error(httpStatus: status))
            return
        }
        if endStream {
            call.end = .some(GRPCStatusFields.error(from: headers))
            return
        }
        call.sawHeaders = true
        if let encoding = headers.first(named: "grpc-encoding"), encoding != "identity" {
            call.encoding = encoding
            switch encoding {
            case "gzip": call.inflater = Inflater(format: .gzip)
            case "deflate": call.inflater = Inflater(format: .zlib)
            default:
                call.end = .some(.badEncoding("the server's grpc-encoding \(encoding) is not one rpc-probe reads"))
            }
        }
    }

    private func received(_ bytes: [UInt8], on call: CallState, id: Int32) {
        do throws(RPCError) {
            for message in try call.reader.append(bytes, limit: maxMessageBytes) {
                var inflated = Array(message.bytes)
                if message.compressed {
                    guard let inflater = call.inflater else {
                        throw RPCError.protocolViolation("a compressed response message without a grpc-encoding")
                    }
                    inflated = []
                    do throws(Inflater.Failure) {
                        try message.bytes.withUnsafeBytes { raw in
                            Result { () throws(Inflater.Failure) in
                                try inflater.inflateIndependent(raw, limit: maxMessageBytes, appendingTo: &inflated)
                            }
                        }.get()
                    } catch {
                        switch error {
                        case .tooLarge(let limit):
                            throw RPCError.messageTooLarge(
                                "a response message inflates past the limit of \(limit) bytes (--max-msg-bytes)")
                        case .corrupt(let reason):
                            throw RPCError.badEncoding("a response message does not inflate: \(reason)")
                        }
                    }
                }
                call.messages.append(
                    Message(
                        bytes: inflated, wireBytes: message.bytes.count + 5,
                        encoding: message.compressed ? call.encoding : nil))
            }
        } catch {
            call.end = .some(error)
            try? http2.resetStream(streamID: id, errorCode: .cancel)
        }
    }

    private func failAll(_ error: RPCError) {
        if failure == nil { failure = error }
        for call in calls.values where call.end == nil { call.end = .some(error) }
    }
}
