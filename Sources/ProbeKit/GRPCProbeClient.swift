internal import CSystemShims
internal import Glibc
import HTTP2Support
import ProtoBridge
import RPCCore
import RPCGRPC
import RPCMessages
import RPCPosix
import TLSSupport

/// rpc-probe's gRPC client (`--grpc`): one HTTP/2 connection — h2c with prior knowledge on a plain
/// socket, or h2 under TLS (ALPN) — driven on the calling thread — a verb starts a call, sends its messages and
/// pulls responses with `next`, which does the I/O until something for that call arrives.
///
/// Blocking and single-threaded on purpose: the probe makes a few calls one after another, and a
/// pull loop keeps the deadline, cancellation and the end of a stream in one place. Calls may
/// overlap (reflection keeps one stream open while it asks several questions).
final class GRPCProbeClient {
    /// "HOST:PORT" as connected to (`:authority`, and the errors).
    let authority: String
    private let fd: Int32
    /// The connection's TLS, when it speaks TLS.
    let tls: TLSSession?
    private let http2 = HTTP2ClientSession()
    private let maxMessageBytes: Int
    private var calls: [Int32: CallState] = [:]
    /// Output taken from nghttp2 and not yet written (the socket is non-blocking).
    private var unsent: [UInt8] = []
    /// Set once the connection is unusable: every open call and every new one fails with it.
    private var failure: RPCError?
    /// TLS: the last read needs the socket writable first, or the last write readable.
    private var readWaitsForOutput = false
    private var writeWaitsForInput = false

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

    private init(fd: Int32, tls: TLSSession?, authority: String, maxMessageBytes: Int) {
        self.fd = fd
        self.tls = tls
        self.authority = authority
        self.maxMessageBytes = maxMessageBytes
    }

    deinit {
        try? http2.submitGoaway()
        http2.takeOutput(into: &unsent)
        _ = try? writeSome()
        tls?.shutdown()
        Glibc.close(fd)
    }

    // MARK: Connecting

    /// Connects — with TLS when `tls` is given, offering ALPN `h2` — and exchanges HTTP/2's
    /// prefaces within `timeoutMs`.
    /// - Throws: UNAVAILABLE when the server cannot be reached, refuses TLS, or does not answer as
    ///   an HTTP/2 server; the message says what it seems to be instead (a server of our framed
    ///   protocol alone, an HTTP/1 server).
    static func connect(host: String, port: UInt16, tls: TLSContext?, timeoutMs: Int, maxMessageBytes: Int)
        throws(RPCError) -> GRPCProbeClient
    {
        let address = GRPCRequestHeaders.authority(host: host, port: port)
        let deadline = monotonicNow() + UInt64(timeoutMs) * 1_000_000
        let fd = host.withCString { cshim_connect($0, port, Int32(timeoutMs)) }
        guard fd >= 0 else {
            throw .unavailable("cannot connect to \(address): \(String(cString: strerror(-fd)))")
        }
        _ = cshim_set_nodelay(fd)
        _ = cshim_set_nonblocking(fd, 1)
        var session: TLSSession?
        if let tls {
            do throws(RPCError) {
                session = try ClientHandshake.establishTLS(
                    fd: fd, context: tls, host: host, port: port, timeoutMs: timeoutMs, deadline: deadline)
            } catch {
                Glibc.close(fd)
                throw error
            }
            if let chosen = session?.applicationProtocol, chosen != TLSContext.http2Protocol {
                session?.shutdown()
                Glibc.close(fd)
                throw .unavailable("\(address) chose the protocol \(chosen) over TLS, not HTTP/2 (ALPN h2)")
            }
        }
        let client = GRPCProbeClient(fd: fd, tls: session, authority: address, maxMessageBytes: maxMessageBytes)
        try client.awaitServerPreface(deadline: deadline, timeoutMs: timeoutMs)
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
        guard tls?.hasBufferedInput == true || poll(&poller, 1, 100) > 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 4096)
        guard let n = try? readSome(into: &buffer), n > 0 else { return }
        _ = buffer.withUnsafeBytes { http2.receive(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
    }

    /// What a peer that did not answer HTTP/2's preface with SETTINGS seems to be.
    static func notGRPC(_ authority: String, firstBytes: [UInt8], closed: RPCError?) -> RPCError {
        let hint = "; --grpc needs a server that speaks standard gRPC"
        // An HTTP/2 GOAWAY before any SETTINGS: a refusal with its reason (a TLS-only port says so).
        if firstBytes.count >= 17, firstBytes[3] == 0x07, firstBytes[5...8].allSatisfy({ $0 == 0 }) {
            let length = Int(firstBytes[0]) << 16 | Int(firstBytes[1]) << 8 | Int(firstBytes[2])
            let debug = String(decoding: firstBytes.dropFirst(17).prefix(max(0, length - 8)), as: UTF8.self)
            let tlsHint = debug.contains("TLS only") ? "; add --tls (with --cacert for a private CA)" : ""
            return .unavailable(
                "\(authority) refused the connection with HTTP/2's GOAWAY\(debug.isEmpty ? "" : ": \(debug)")\(tlsHint)"
            )
        }
        if firstBytes.count >= FrameHeader.size {
            let (header, _) = firstBytes.withUnsafeBytes { FrameHeader.read(from: $0) }
            if header.type == .goaway, header.streamID == 0 {
                let payload = Array(firstBytes.dropFirst(FrameHeader.size).prefix(Int(header.length)))
                let reason = (try? Goaway(serializedBytes: payload))?.status?.message
                return .unavailable(
                    "\(authority) answered HTTP/2's preface with a GOAWAY of rpc-probe's own framed protocol (MRPC)"
                        + "\(reason.map { ": \($0)" } ?? ""): a server of that protocol alone, or one refusing "
                        + "connections for now; drop --grpc to speak our protocol to it")
            }
        }
        let text = String(decoding: firstBytes.prefix { $0 != 13 && $0 != 10 }, as: UTF8.self)
        if text.hasPrefix("HTTP/1.") {
            return .unavailable("\(authority) is not a gRPC server: it answered in HTTP/1 (\"\(text)\")" + hint)
        }
        if firstBytes.isEmpty {
            return .unavailable(
                "\(authority) closed the connection without answering HTTP/2's preface (\(closed?.message ?? "no reply")): "
                    + "it does not seem to speak gRPC" + hint)
        }
        return .unavailable(
            "\(authority) is not a gRPC server: its first bytes are not HTTP/2's SETTINGS frame" + hint)
    }

    /// True when `host:port` answers HTTP/2's preface with SETTINGS: asked after our framed
    /// handshake failed, to tell a user who forgot `--grpc` that this server speaks gRPC.
    static func answersHTTP2(host: String, port: UInt16, timeoutMs: Int) -> Bool {
        (try? connect(host: host, port: port, tls: nil, timeoutMs: timeoutMs, maxMessageBytes: 1024)) != nil
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
        if tls != nil { headers.scheme = "https" }
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
        var events = Int16(POLLIN)
        if !unsent.isEmpty { events |= writeWaitsForInput ? Int16(POLLIN) : Int16(POLLOUT) }
        if readWaitsForOutput { events |= Int16(POLLOUT) }
        var poller = pollfd(fd: fd, events: events, revents: 0)
        // OpenSSL may hold decrypted input the socket no longer shows.
        let ready = tls?.hasBufferedInput == true ? 1 : poll(&poller, 1, timeoutMs)
        if ready < 0 && errno != EINTR {
            throw .unavailable("\(authority): poll failed: \(String(cString: strerror(errno)))")
        }
        guard ready > 0 else { return }
        if poller.revents & Int16(POLLOUT) != 0 || (writeWaitsForInput && poller.revents & Int16(POLLIN) != 0) {
            try flush()
        }
        if poller.revents & Int16(POLLIN | POLLHUP | POLLERR | POLLOUT) != 0 || tls?.hasBufferedInput == true {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            let n = try readSome(into: &buffer)
            guard n > 0 else { return }
            handle(buffer.withUnsafeBytes { http2.receive(UnsafeRawBufferPointer(rebasing: $0[0..<n])) })
            // Acknowledgements and WINDOW_UPDATEs go out at once.
            handle(http2.takeOutput(into: &unsent))
            try flush()
        }
    }

    private func flush() throws(RPCError) {
        while !unsent.isEmpty {
            let n = try writeSome()
            if n == 0 { return }
            unsent.removeFirst(n)
        }
    }

    /// Reads what the connection has (through TLS when it speaks TLS): the count, or 0 when
    /// nothing is there yet.
    /// - Throws: UNAVAILABLE when the server closed the connection or it failed.
    private func readSome(into buffer: inout [UInt8]) throws(RPCError) -> Int {
        if let tls {
            readWaitsForOutput = false
            let result = buffer.withUnsafeMutableBytes { tls.read(into: $0.baseAddress!, count: $0.count) }
            switch result {
            case .bytes(let n): return n
            case .wantRead: return 0
            case .wantWrite:
                readWaitsForOutput = true
                return 0
            case .closed: throw .unavailable("\(authority): the server closed the connection")
            case .failed:
                throw .unavailable("\(authority): TLS failed: \(tls.failure?.message ?? "no reason given")")
            }
        }
        let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
        if n == 0 { throw .unavailable("\(authority): the server closed the connection") }
        if n < 0 {
            if errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK { return 0 }
            throw .unavailable("\(authority): cannot read from the server: \(String(cString: strerror(errno)))")
        }
        return n
    }

    /// Writes what it can of `unsent` (through TLS when it speaks TLS): the count, 0 when the
    /// socket takes nothing now.
    private func writeSome() throws(RPCError) -> Int {
        guard !unsent.isEmpty else { return 0 }
        if let tls {
            writeWaitsForInput = false
            let result = unsent.withUnsafeBytes { tls.write(from: $0.baseAddress!, count: $0.count) }
            switch result {
            case .bytes(let n): return n
            case .wantWrite: return 0
            case .wantRead:
                writeWaitsForInput = true
                return 0
            case .closed: throw .unavailable("\(authority): the server closed the connection")
            case .failed:
                throw .unavailable("\(authority): TLS failed: \(tls.failure?.message ?? "no reason given")")
            }
        }
        while true {
            // MSG_NOSIGNAL: a server that closes on our preface must be an error, not SIGPIPE.
            let n = unsent.withUnsafeBytes { Glibc.send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
            if n >= 0 { return n }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { return 0 }
            throw .unavailable("\(authority): cannot write to the server: \(String(cString: strerror(errno)))")
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
