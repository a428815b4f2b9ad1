import ProtoBridge
import RPCCore
import RPCMessages
import RPCPosix
import TestSupport
import Testing

/// The client library's side of two protocol rules, against a fake server: a streaming call
/// refused before it runs gets one REPLY (not TRAILERS), and a body over the client's own
/// `maxMessageBytes` is refused even when it is not compressed.
@Suite("Client library: refused streams and the client's message limit")
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
}
