import ProtoBridge
import RPCCore
import RPCMessages
import RPCPosix
import TestSupport
import Testing

/// The client library's side of three protocol rules, against a fake server: a streaming call
/// refused before it runs gets one REPLY (not TRAILERS), a body over the client's own
/// `maxMessageBytes` is refused even when it is not compressed, and a call over the limits the
/// server stated in HELLO_ACK is refused before anything of it is sent.
@Suite("Client library: refused streams and both sides' message limits")
struct ClientRefusalTests {
    @Test("a streaming call refused with a REPLY ends with that error, and the connection stays usable")
    func streamRefusedByReply() throws {
        let listener = try RawListener()
        let (client, server) = try listener.connectClient()
        defer { client.close() }
        let ends = Collector<RPCError?>()
        let messages = Collector<ClientConnection.StreamMessage>()
        client.stream(
            path: "/x.v1.Nowhere/Follow", body: [], onMessage: { messages.append($0) }, onEnd: { ends.append($0) })
        let call = try server.expectFrame()
        #expect(call.type == .call)
        try server.send(Frames.reply(streamID: call.streamID, error: .unimplemented(method: "/x.v1.Nowhere/Follow")))
        #expect(ends.waitForCount(1), "the stream never ended")
        let end = try #require(ends.items.first)
        #expect(end?.code == .unimplemented)
        #expect(end?.errorCode == "ERR_UNIMPLEMENTED")
        #expect(messages.items.isEmpty)
        #expect(client.pendingCallCount == 0)
        #expect(client.isUsable)
    }

    @Test("an uncompressed reply over maxMessageBytes fails RESOURCE_EXHAUSTED; one at the limit passes")
    func unaryReplyOverTheLimit() throws {
        let listener = try RawListener()
        let (client, server) = try listener.connectClient { $0.maxMessageBytes = 1024 }
        defer { client.close() }
        let results = Collector<Result<EchoResponse, RPCError>>()
        client.unary(DiagnosticsMethods.echo, EchoRequest()) { results.append($0) }
        client.unary(DiagnosticsMethods.echo, EchoRequest()) { results.append($0) }
        let first = try server.expectFrame().streamID
        let second = try server.expectFrame().streamID
        // EchoResponse{payload: n bytes} encodes to 1 (tag) + 2 (length) + n bytes.
        try server.send(Frames.reply(streamID: first, EchoResponse(payload: [UInt8](repeating: 7, count: 1021))))
        #expect(results.waitForCount(1))
        #expect(try results.items[0].get().payload.count == 1021)
        try server.send(Frames.reply(streamID: second, EchoResponse(payload: [UInt8](repeating: 7, count: 1022))))
        #expect(results.waitForCount(2))
        #expect {
            try results.items[1].get()
        } throws: { error in
            let error = error as? RPCError
            return error?.code == .resourceExhausted && error?.errorCode == "ERR_MESSAGE_TOO_LARGE"
                && error?.message.contains("1025 bytes") == true
        }
        #expect(client.isUsable)
    }

    @Test("an uncompressed stream message over maxMessageBytes ends the stream and cancels it")
    func streamMessageOverTheLimit() throws {
        let listener = try RawListener()
        let (client, server) = try listener.connectClient { $0.maxMessageBytes = 1024 }
        defer { client.close() }
        let ends = Collector<RPCError?>()
        let messages = Collector<ClientConnection.StreamMessage>()
        client.stream(
            path: "/x.v1.Nowhere/Follow", body: [], onMessage: { messages.append($0) }, onEnd: { ends.append($0) })
        let call = try server.expectFrame()
        try server.send(Frames.frame(.message, streamID: call.streamID, payload: [UInt8](repeating: 1, count: 1024)))
        try server.send(Frames.frame(.message, streamID: call.streamID, payload: [UInt8](repeating: 2, count: 1025)))
        #expect(ends.waitForCount(1), "the stream never ended")
        #expect(ends.items.first??.errorCode == "ERR_MESSAGE_TOO_LARGE")
        #expect(messages.items.map(\.body.count) == [1024])
        let cancel = try server.expectFrame()
        #expect(cancel.type == .cancel)
        #expect(cancel.streamID == call.streamID)
    }

    /// How a call over HELLO_ACK's limits (the fake server states 4 MiB and 8 KiB) is made.
    enum Oversized: String, CaseIterable, CustomTestStringConvertible {
        case encodedBody = "an encoded body one byte over max_message_bytes"
        case typedBody = "a typed request one byte over max_message_bytes"
        case compressedBody = "a request that deflates small but is over max_message_bytes before"
        case header = "a CallHeader over max_call_header_bytes (metadata)"
        var testDescription: String { rawValue }
    }

    @Test(
        "a call over the limits in the server's HELLO_ACK fails RESOURCE_EXHAUSTED quoting them, and nothing is sent",
        arguments: Oversized.allCases)
    func callOverTheServersLimits(_ oversized: Oversized) throws {
        let listener = try RawListener()
        let (client, server) = try listener.connectClient()
        defer { client.close() }
        #expect(client.helloAck.maxMessageBytes == 4 << 20 && client.helloAck.maxCallHeaderBytes == 8 << 10)
        // EchoRequest{payload: n bytes} encodes to 1 (tag) + 4 (length) + n bytes past 2 MiB.
        let overBody = [UInt8](repeating: 7, count: (4 << 20) - 4)
        let result = Result { () throws(RPCError) in
            switch oversized {
            case .encodedBody:
                _ = try client.call(
                    path: DiagnosticsMethods.echo.path, body: EchoRequest(payload: overBody).serializedBytes())
            case .typedBody:
                _ = try client.unary(DiagnosticsMethods.echo, EchoRequest(payload: overBody))
            case .compressedBody:
                _ = try client.unary(
                    DiagnosticsMethods.echo, EchoRequest(payload: overBody), options: CallOptions(compressRequest: true)
                )
            case .header:
                _ = try client.unary(
                    DiagnosticsMethods.echo, EchoRequest(),
                    options: CallOptions(metadata: ["big": String(repeating: "m", count: 8 << 10)]))
            }
        }
        let error = try #require(result.failure)
        #expect(error.code == .resourceExhausted)
        #expect(error.errorCode == "ERR_MESSAGE_TOO_LARGE")
        if oversized == .header {
            #expect(
                error.message.contains("exceeds the server's limit of 8192 bytes (max_call_header_bytes"), "\(error)")
            #expect(error.details == ["limit": "8192"])
        } else {
            #expect(
                error.message
                    == "the request message of 4194305 bytes exceeds the server's limit of 4194304 bytes "
                    + "(max_message_bytes in its HELLO_ACK); it was not sent")
            #expect(error.details == ["limit": "4194304"])
        }
        #expect(try server.staysQuiet(forMs: 100), "nothing of the refused call was sent")
        #expect(client.isUsable)
        #expect(client.pendingCallCount == 0)

        // The next call goes out on stream 1: the refused one took no stream id.
        let results = Collector<Result<EchoResponse, RPCError>>()
        client.unary(DiagnosticsMethods.echo, EchoRequest(payload: [1, 2])) { results.append($0) }
        let call = try server.expectFrame()
        #expect(call.type == .call && call.streamID == 1)
        try server.send(Frames.reply(streamID: 1, EchoResponse(payload: [1, 2])))
        #expect(results.waitForCount(1))
        #expect(try results.items[0].get().payload == [1, 2])
    }

    @Test("a call at exactly max_message_bytes goes out whole")
    func callAtTheServersLimit() throws {
        let listener = try RawListener()
        let (client, server) = try listener.connectClient()
        defer { client.close() }
        let body = EchoRequest(payload: [UInt8](repeating: 7, count: (4 << 20) - 5)).serializedBytes()
        #expect(body.count == 4 << 20)
        client.call(path: DiagnosticsMethods.echo.path, body: body) { _ in }
        let call = try server.expectFrame(timeoutMs: 10_000)
        #expect(try call.call().body == body)
    }
}

extension Result {
    /// The error of a failed result; nil for a success.
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
