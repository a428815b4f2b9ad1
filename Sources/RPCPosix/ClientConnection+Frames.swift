import ProtoBridge
import RPCCore
import RPCMessages
import Synchronization

/// What each frame from the server does to its call, on the reader thread.
extension ClientConnection {
    func handle(_ header: FrameHeader, _ payload: [UInt8]) {
        switch header.type {
        case .reply:
            guard let call = state.withLock({ $0.calls.removeValue(forKey: header.streamID) }) else { return }
            switch call.receiver {
            case .unary(let completion):
                completion(parseReply(header, payload))
            case .stream(_, let onEnd):
                // A streaming call the server refused before running it (unknown method, bad
                // request, too many calls) gets one REPLY with the error instead of TRAILERS.
                inflaters.drop(streamID: header.streamID)
                switch parseReply(header, payload) {
                case .failure(let error): onEnd(error)
                case .success: onEnd(.protocolViolation("the server answered a streaming call with an OK REPLY"))
                }
            }
        case .message:
            guard let call = state.withLock({ $0.calls[header.streamID] }),
                case .stream(let onMessage, _) = call.receiver
            else { return }
            if header.isCompressed {
                var body: [UInt8] = []
                do throws(Inflater.Failure) {
                    try inflaters.stream(header.streamID).inflateStreamMessage(
                        payload, limit: options.maxMessageBytes, appendingTo: &body)
                } catch {
                    abandon(
                        header.streamID,
                        failing: RPCError.badEncoding("a compressed stream message does not inflate: \(error)").caused(
                            by: error))
                    return
                }
                onMessage(
                    StreamMessage(streamID: header.streamID, body: body, wireBytes: payload.count, compressed: true))
            } else {
                guard payload.count <= options.maxMessageBytes else {
                    abandon(header.streamID, failing: tooLarge(payload.count))
                    return
                }
                onMessage(
                    StreamMessage(streamID: header.streamID, body: payload, wireBytes: payload.count, compressed: false)
                )
            }
        case .trailers:
            inflaters.drop(streamID: header.streamID)
            guard let call = state.withLock({ $0.calls.removeValue(forKey: header.streamID) }),
                case .stream(_, let onEnd) = call.receiver
            else { return }
            do throws(RPCError) {
                let status = try Status(fromServer: payload)
                onEnd(status.code == 0 ? nil : RPCError(status: status))
            } catch {
                onEnd(error)
            }
        case .ping:
            enqueue { out in payload.withUnsafeBytes { FrameWriter.ping(.pong, payload: $0, into: &out) } }
        case .goaway:
            let goaway = (try? Goaway(fromServer: payload)) ?? Goaway()
            let error = RPCError(status: goaway.status ?? RPCError.unavailable("the server went away").status)
            let refused: [PendingCall] = state.withLock { state in
                state.goawayLastStream = goaway.lastStreamID
                let ids = state.calls.keys.filter { $0 > goaway.lastStreamID }
                return ids.compactMap { state.calls.removeValue(forKey: $0) }
            }
            let notRun = RPCError.unavailable(
                "the server went away before running the call (\(error.message)); it may be retried"
            )
            .caused(by: error)
            for call in refused { call.fail(notRun) }
        default:
            break
        }
    }

    /// A REPLY's status (a failure when not OK) or its body, inflated when compressed.
    private func parseReply(_ header: FrameHeader, _ payload: [UInt8]) -> Result<[UInt8], RPCError> {
        guard payload.count >= 4 else { return .failure(.protocolViolation("REPLY shorter than its status length")) }
        let statusLength = payload.withUnsafeBytes { Int(BigEndian.readUInt32($0)) }
        guard statusLength <= payload.count - 4 else {
            return .failure(.protocolViolation("REPLY status length beyond the frame"))
        }
        if statusLength > 0 {
            do throws(RPCError) {
                let status = try Status(fromServer: Array(payload[4..<4 + statusLength]))
                if status.code != 0 { return .failure(RPCError(status: status)) }
            } catch {
                return .failure(error)
            }
        }
        let body = Array(payload[(4 + statusLength)...])
        guard header.isCompressed else {
            return body.count <= options.maxMessageBytes ? .success(body) : .failure(tooLarge(body.count))
        }
        var inflated: [UInt8] = []
        do throws(Inflater.Failure) {
            try inflaters.unary.inflateIndependent(body, limit: options.maxMessageBytes, appendingTo: &inflated)
        } catch {
            return .failure(RPCError.badEncoding("the compressed reply does not inflate: \(error)").caused(by: error))
        }
        return .success(inflated)
    }

    /// The error for an uncompressed body over `maxMessageBytes` (compressed ones are capped
    /// while they inflate).
    private func tooLarge(_ count: Int) -> RPCError {
        .messageTooLarge(
            "the server sent a body of \(count) bytes; this client accepts at most \(options.maxMessageBytes) (maxMessageBytes)"
        )
    }
}
