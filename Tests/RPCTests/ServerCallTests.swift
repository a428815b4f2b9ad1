import ProtoBridge
import RPCCore
import RPCMessages
import TestSupport
import Testing

/// A call's termination handlers: run for ends from outside, and let go of once the call
/// completes by itself, since a handler usually captures the stream or responder (and so the call).
@Suite("ServerCall: termination handlers")
struct ServerCallTests {
    static func makeCall(port: any CallPort = FakeCallPort()) -> ServerCall {
        ServerCall(context: CallContext(method: "/t/M", streamID: 1, appID: "app1"), port: port)
    }

    @Test("a unary call answered by its handler releases its termination handlers and what they capture")
    func unaryReplyReleasesHandlers() {
        weak var released: ServerCall?
        do {
            let call = Self.makeCall()
            released = call
            let responder = UnaryResponder<EchoResponse>(call: call)
            call.onTermination { _ in _ = responder } // captures the responder, and so the call
            responder.succeed(EchoResponse(payload: [1]))
        }
        #expect(released == nil, "the call is kept alive by its own termination handler")
    }

    @Test("a unary call failed by its handler releases its termination handlers")
    func unaryFailureReleasesHandlers() {
        weak var released: ServerCall?
        do {
            let call = Self.makeCall()
            released = call
            let responder = UnaryResponder<EchoResponse>(call: call)
            call.onTermination { _ in _ = responder }
            responder.fail(.invalidArgument("no"))
        }
        #expect(released == nil, "the call is kept alive by its own termination handler")
    }

    @Test("a stream finished by its handler releases its termination handlers and what they capture")
    func streamFinishReleasesHandlers() {
        weak var released: ServerCall?
        weak var releasedStream: ServerStream<EchoResponse>?
        do {
            let call = Self.makeCall()
            released = call
            let stream = ServerStream<EchoResponse>(call: call, pendingLimit: 1 << 20)
            releasedStream = stream
            stream.onTermination { _ in stream.finish(.unavailable("draining")) } // as a subscription does
            _ = stream.send(EchoResponse(payload: [1]))
            stream.finish()
        }
        #expect(released == nil && releasedStream == nil, "the stream is kept alive by its own termination handler")
    }

    @Test("a handler registered after the call completed by itself is not kept and never runs")
    func lateRegistrationIsDropped() {
        let call = Self.makeCall()
        UnaryResponder<EchoResponse>(call: call).succeed(EchoResponse())
        let ran = Collector<CallTermination>()
        call.onTermination { ran.append($0) }
        call.terminate(.connectionClosed)
        #expect(ran.items.isEmpty)
    }

    @Test(
        "ends from outside still run every handler once, after the completion is claimed",
        arguments: [CallTermination.cancelled, .deadlineExceeded, .connectionClosed, .draining])
    func outsideEndsRunHandlers(reason: CallTermination) {
        let call = Self.makeCall()
        let ran = Collector<CallTermination>()
        call.onTermination { ran.append($0) }
        call.onTermination { ran.append($0) }
        _ = call.complete(.cancelled("outside")) // as the session does before terminating
        call.terminate(reason)
        call.terminate(reason)
        #expect(ran.items == [reason, reason])
        // Registered after the end: runs at once.
        call.onTermination { ran.append($0) }
        #expect(ran.items == [reason, reason, reason])
    }
}
