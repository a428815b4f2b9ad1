public import ProtoBridge
public import RPCCore
public import RPCMessages
public import RPCPosix

extension RawListener {
    /// Connects the client library to this listener, playing the server's side of the handshake.
    /// - Returns: the client, and the raw server end of its connection.
    public func connectClient(
        _ configure: @Sendable (inout ClientOptions) -> Void = { _ in }
    ) throws -> (client: ClientConnection, server: RawConnection) {
        var options = ClientOptions(port: port, apiKey: Frames.apiKey)
        configure(&options)
        let settled = options
        let connecting = Background { Result { () throws(RPCError) in try ClientConnection.connect(settled) } }
        let (server, _) = try acceptHandshake()
        let client = try connecting.wait().get()
        return (client, server)
    }
}

extension RawFrame {
    /// The CallHeader and (raw) body of a CALL.
    public func call() throws -> (header: CallHeader, body: [UInt8]) {
        guard type == .call else { throw TestFailure("expected CALL, got \(self)") }
        guard payload.count >= 4 else { throw TestFailure("CALL of \(payload.count) bytes") }
        let length = payload.withUnsafeBytes { Int(BigEndian.readUInt32($0)) }
        guard length <= payload.count - 4 else { throw TestFailure("CALL header length \(length) past the frame") }
        return (try CallHeader(serializedBytes: payload[4..<4 + length]), Array(payload[(4 + length)...]))
    }
}

extension Frames {
    /// REPLY OK with `response`, as a server sends it.
    public static func reply<Response: ProtoMessage>(streamID: UInt32, _ response: Response) -> [UInt8] {
        var out: [UInt8] = []
        FrameWriter.reply(streamID: streamID, message: ResponseMessage(bytes: response.serializedBytes()), into: &out)
        return out
    }

    /// REPLY carrying `error`.
    public static func reply(streamID: UInt32, error: RPCError) -> [UInt8] {
        var out: [UInt8] = []
        FrameWriter.reply(streamID: streamID, error: error, into: &out)
        return out
    }

    /// GOAWAY naming the last stream the server will finish.
    public static func goaway(lastStreamID: UInt32, error: RPCError) -> [UInt8] {
        var out: [UInt8] = []
        FrameWriter.goaway(lastStreamID: lastStreamID, error: error, into: &out)
        return out
    }
}
