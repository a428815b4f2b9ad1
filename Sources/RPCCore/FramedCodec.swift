import ProtoBridge
import RPCMessages

/// Our framed protocol (docs/PROTOCOL.md) as a connection's wire: the preface, HELLO and the
/// frames in; HELLO_ACK, REPLY, MESSAGE, TRAILERS, PING and GOAWAY out.
///
/// It reads frames straight from the transport's buffer and writes them straight into the core's
/// `outbound`; what a frame means for the connection (a key, a call, a cancel) it hands to its
/// `ConnectionCore`, which holds the rules both wires share.
final class FramedCodec: WireCodec {
    let wire = WireKind.mrpc
    /// Invariant: the core owns this codec and outlives it (unowned(unsafe): no reference count
    /// is checked on the per-frame path).
    private unowned(unsafe) let core: ConnectionCore
    private var sawPreface = false
    private var sawHello = false
    /// Who the HELLO authenticated (every call of the connection runs as it).
    private var caller = Authenticated.anonymous
    /// The last stream id a CALL used: ids must increase.
    private var lastStreamID: UInt32 = 0
    private var acceptsDeflate = false

    init(core: ConnectionCore) {
        self.core = core
    }

    // MARK: Input

    func receive(_ bytes: UnsafeRawBufferPointer, outboundLimit: Int, frameLimit: Int) -> (consumed: Int, needed: Int) {
        var offset = 0
        var frames = 0
        if !sawPreface {
            guard bytes.count >= Preface.size else { return (0, Preface.size) }
            if let problem = Preface.problem(in: UnsafeRawBufferPointer(rebasing: bytes[0..<Preface.size])) {
                core.handshakeRefused(.badPreface)
                core.fail(.protocolViolation(problem))
                return (bytes.count, 0)
            }
            offset = Preface.size
            sawPreface = true
        }
        while core.isReading {
            guard core.mayDecodeFrame(after: frames, outboundLimit: outboundLimit, frameLimit: frameLimit) else {
                return (offset, 0)
            }
            let available = bytes.count - offset
            guard available >= FrameHeader.size else {
                core.inputLeft(incomplete: available > 0)
                return (offset, FrameHeader.size)
            }
            let (header, reserved) = FrameHeader.read(
                from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + FrameHeader.size]))
            if !sawHello, let problem = handshakeProblem(header) {
                // Refused from the header alone: an unauthenticated peer never makes the server
                // wait for (and buffer) a large payload.
                core.handshakeRefused(.badHello)
                core.fail(problem)
                return (bytes.count, 0)
            }
            guard Int(header.length) <= core.limits.maxFramePayload else {
                core.fail(
                    .messageTooLarge(
                        "frame of \(header.length) bytes exceeds the limit of \(core.limits.maxFramePayload) bytes"))
                return (bytes.count, 0)
            }
            let total = FrameHeader.size + Int(header.length)
            guard available >= total else {
                core.inputLeft(incomplete: true)
                return (offset, total)
            }
            let payload = UnsafeRawBufferPointer(rebasing: bytes[offset + FrameHeader.size..<offset + total])
            offset += total
            frames += 1
            core.inboundFrame()
            // An extension frame is ignored whole: its flags and reserved bits are the extension's.
            if header.type.isExtension { continue }
            if reserved != 0 || header.flags & ~FrameHeader.compressedFlag != 0 {
                core.fail(
                    .protocolViolation("frame \(header.type) on stream \(header.streamID) has non-zero reserved bits"))
                break
            }
            handle(header, payload)
        }
        return (offset, 0)
    }

    /// Before HELLO, what is wrong with a frame from its header alone: more than
    /// `maxHelloBytes` of payload (whatever its type), a type other than HELLO, or HELLO off
    /// stream 0. Extension frames may come first, within the same size.
    private func handshakeProblem(_ header: FrameHeader) -> RPCError? {
        guard Int(header.length) <= core.limits.maxHelloBytes else {
            let what = header.type == .hello ? "HELLO" : "a frame before HELLO (\(header.type))"
            return .messageTooLarge(
                "\(what) of \(header.length) bytes exceeds the limit of \(core.limits.maxHelloBytes) bytes")
        }
        guard !header.type.isExtension else { return nil }
        guard header.type.isKnown else { return .protocolViolation("unknown frame type \(header.type)") }
        guard header.type == .hello, header.streamID == 0 else {
            return .protocolViolation(
                "the first frame must be HELLO on stream 0, got \(header.type) on stream \(header.streamID)")
        }
        return nil
    }

    private func handle(_ header: FrameHeader, _ payload: UnsafeRawBufferPointer) {
        guard header.type.isKnown else { return core.fail(.protocolViolation("unknown frame type \(header.type)")) }
        guard sawHello else { return handleHello(payload) } // `handshakeProblem` checked it is HELLO on stream 0
        if header.isCompressed && header.type != .call {
            return core.fail(.protocolViolation("frame \(header.type) cannot be compressed"))
        }
        switch header.type {
        case .call:
            handleCall(header, payload)
        case .cancel:
            core.cancel(streamID: header.streamID, reason: "the client cancelled the call")
        case .ping:
            guard header.streamID == 0, payload.count == 8 else {
                return core.fail(.protocolViolation("PING must carry 8 bytes on stream 0"))
            }
            FrameWriter.ping(.pong, payload: payload, into: &core.outbound)
        case .pong:
            break
        default:
            core.fail(.protocolViolation("a client cannot send \(header.type)"))
        }
    }

    private func handleHello(_ payload: UnsafeRawBufferPointer) {
        let hello: Hello
        do {
            hello = try Hello(serializedBytes: payload)
        } catch {
            core.handshakeRefused(.badHello)
            return core.fail(.invalidArgument(error.description))
        }
        switch core.authenticate(apiKey: hello.apiKey, appID: hello.appID, clientName: hello.clientName) {
        case .failure(let error):
            core.fail(error)
        case .success(let caller):
            sawHello = true
            self.caller = caller
            acceptsDeflate = hello.acceptEncodings.contains("deflate")
            let limits = core.limits
            let maxCalls =
                caller == .anonymous
                ? min(limits.anonymousMaxConcurrentCalls, limits.maxConcurrentCalls) : limits.maxConcurrentCalls
            FrameWriter.helloAck(
                HelloAck(
                    serverName: core.environment.serverName, serverVersion: core.environment.serverVersion,
                    protocolVersion: 1, maxMessageBytes: UInt32(limits.maxMessageBytes),
                    maxCallHeaderBytes: UInt32(limits.maxCallHeaderBytes), maxConcurrentCalls: UInt32(maxCalls),
                    acceptEncodings: acceptsDeflate ? ["deflate"] : [], appID: caller.appID,
                    idleTimeoutMs: UInt32(caller == .anonymous ? limits.handshakeTimeoutMs : limits.idleTimeoutMs),
                    schemaDigest: core.environment.schemaDigest), into: &core.outbound)
        }
    }

    private func handleCall(_ header: FrameHeader, _ payload: UnsafeRawBufferPointer) {
        let streamID = header.streamID
        guard streamID != 0 else { return core.fail(.protocolViolation("CALL on stream 0")) }
        guard streamID > lastStreamID else {
            let reason =
                core.isLive(streamID)
                ? "stream id \(streamID) is already in use"
                : "stream id \(streamID) is not greater than the previous one (\(lastStreamID))"
            return core.fail(.protocolViolation(reason))
        }
        guard payload.count >= 4 else {
            return core.fail(.protocolViolation("CALL on stream \(streamID) is shorter than its header length"))
        }
        let headerLength = Int(BigEndian.readUInt32(payload))
        guard headerLength <= payload.count - 4 else {
            return core.fail(
                .protocolViolation(
                    "CALL on stream \(streamID) declares a header of \(headerLength) bytes but carries \(payload.count - 4)"
                ))
        }
        lastStreamID = streamID
        guard headerLength <= core.limits.maxCallHeaderBytes else {
            return core.refuse(
                streamID: streamID,
                .messageTooLarge(
                    "call header of \(headerLength) bytes exceeds the limit of \(core.limits.maxCallHeaderBytes)"),
                head: nil, caller: caller)
        }
        let callHeader: CallHeader
        do {
            callHeader = try CallHeader(
                serializedBytes: UnsafeRawBufferPointer(rebasing: payload[4..<4 + headerLength]))
        } catch {
            return core.refuse(streamID: streamID, .invalidArgument(error.description), head: nil, caller: caller)
        }
        // Read before the head is made of the rest, which then takes the strings over (no copies).
        let compression: MessageCompression =
            acceptsDeflate && callHeader.acceptEncodings.contains("deflate") ? .framedDeflate : .none
        let head = CallHead(
            path: callHeader.method,
            timeoutNanoseconds: callHeader.timeoutMs > 0 ? UInt64(callHeader.timeoutMs) * 1_000_000 : nil,
            onBehalfOf: callHeader.onBehalfOf, idempotencyKey: callHeader.idempotencyKey,
            requestID: callHeader.requestID, metadata: callHeader.metadata, byteCount: headerLength)
        let method: RegisteredMethod?
        do throws(RPCError) {
            method = try core.admit(head, caller: caller)
        } catch {
            return core.refuse(
                streamID: streamID, error, head: head, caller: caller,
                methodIndex: core.environment.methods[head.path]?.index)
        }
        core.open(
            streamID: streamID, head: head, method: method, caller: caller, compression: compression,
            request: ConnectionCore.RequestBody(
                bytes: UnsafeRawBufferPointer(rebasing: payload[(4 + headerLength)...]),
                encoding: header.isCompressed ? .raw : nil))
    }

    // MARK: Output

    func takeOutput() {}
    var hasPendingOutput: Bool { false }
    var queuedBytes: Int { 0 }
    var stateBytes: Int { 0 }
    var wantsClose: Bool { false }

    func writeReply(streamID: UInt32, _ message: ResponseMessage) {
        if core.outbound.isEmpty && message.bytes.count > Self.replyTakenWhole && !message.compressed {
            // A large reply becomes the output with its header in front, rather than being copied
            // into the output a second time (a 4 MiB reply is a millisecond of the loop's time).
            var frame: [UInt8] = []
            frame.reserveCapacity(FrameHeader.size + 4 + message.bytes.count)
            FrameWriter.reply(streamID: streamID, message: message, into: &frame)
            core.outbound = frame
            return
        }
        FrameWriter.reply(streamID: streamID, message: message, into: &core.outbound)
    }

    /// A reply larger than this is framed into a buffer of its own, which becomes the output when
    /// nothing else waits.
    static let replyTakenWhole = 64 * 1024

    func writeReply(streamID: UInt32, _ write: MessageWriter) {
        FrameWriter.reply(streamID: streamID, into: &core.outbound, write)
    }

    func writeMessage(streamID: UInt32, _ message: ResponseMessage) {
        FrameWriter.streamMessage(streamID: streamID, message: message, into: &core.outbound)
    }

    func writeMessages(_ run: ArraySlice<OutgoingPart>, isLive: (UInt32) -> Bool) {
        // The output is taken out of the core for the run: the stored property is reached once
        // per run, not twice per message (each reach is a dynamic exclusivity check, which cost
        // as much as writing the frame).
        var output: [UInt8] = []
        swap(&output, &core.outbound)
        for outgoing in run {
            guard case .message(let message) = outgoing.part, isLive(outgoing.streamID) else { continue }
            FrameWriter.streamMessage(streamID: outgoing.streamID, message: message, into: &output)
        }
        swap(&output, &core.outbound)
    }

    func writeEnd(streamID: UInt32, error: RPCError?, isStream: Bool) {
        if isStream {
            FrameWriter.trailers(streamID: streamID, status: error?.status ?? Status(), into: &core.outbound)
        } else if let error {
            FrameWriter.reply(streamID: streamID, error: error, into: &core.outbound)
        } else {
            assertionFailure("a unary call ends with its reply or an error")
        }
    }

    func callRemoved(streamID: UInt32) {}

    func writeGoaway(lastStreamID: UInt32, error: RPCError, closing: Bool) {
        FrameWriter.goaway(lastStreamID: lastStreamID, error: error, into: &core.outbound)
    }

    func connectionClosed() {}

    func writeClosing(_ reason: ConnectionStateMachine.CloseReason) {}

    func writePing(token: UInt64) {
        withUnsafeBytes(of: token.littleEndian) { FrameWriter.ping(.ping, payload: $0, into: &core.outbound) }
    }
}
