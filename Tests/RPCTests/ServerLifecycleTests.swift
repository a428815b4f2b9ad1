import ProtoBridge
import RPCCore
import RPCMessages
import RPCPosix
import TestSupport
import Testing

/// How a real server ends connections on its own: graceful shutdown and the idle timeout.
@Suite("Real sockets: graceful shutdown and idle timeout")
struct ServerLifecycleTests {
    @Test("shutdown: GOAWAY names the last stream, streams end UNAVAILABLE with last_seq, calls finish, then the close")
    func gracefulShutdown() throws {
        let server = try TestServer()
        defer { server.stop() }
        let (raw, _) = try server.rawOpen()
        try raw.send(Frames.call(streamID: 1, TestService.park, EchoRequest(payload: [1])))
        #expect(server.service.waitForParked(1))
        try raw.send(Frames.call(streamID: 3, TestService.follow, EchoRequest()))
        #expect(try raw.expectFrame().type == .message)

        let started = Clock.nowMs
        let shutdown = Background { server.stop(gracePeriodMs: 10_000) }
        let goaway = try raw.expectFrame().goaway()
        #expect(goaway.lastStreamID == 3)
        #expect(goaway.status?.code == StatusCode.unavailable.rawValue)
        #expect(goaway.status?.errorCode == "ERR_UNAVAILABLE")
        #expect(server.service.waitForTermination(of: 3) == .draining)
        let trailers = try raw.expectFrame()
        #expect(trailers.streamID == 3)
        let status = try trailers.trailers()
        #expect(status.code == StatusCode.unavailable.rawValue)
        #expect(status.details["last_seq"] == "1")

        // A call sent after the GOAWAY is refused, not run.
        let refused = try raw.roundTrip(Frames.echo(streamID: 5, [5]), streamID: 5)
        #expect(try refused.replyError()?.code == .unavailable)
        #expect(!shutdown.isFinished, "the parked call is still in flight")

        #expect(server.service.releaseParked() == 1)
        let frames = try raw.expectClose()
        #expect(frames.count == 1)
        #expect(frames.first?.streamID == 1)
        #expect(try frames.first?.replyError() == nil, "the call below the GOAWAY's last stream completes")
        try shutdown.wait()
        let took = Clock.nowMs - started
        #expect(took < 5_000, "shutdown took \(took) ms: it should end when the last call does")
        #expect(throws: (any Error).self, "the listener is closed") { try server.checkServing() }
    }

    @Test("shutdown: a client's calls in flight complete; its later calls fail UNAVAILABLE without reaching the server")
    func shutdownSeenByClient() throws {
        let server = try TestServer()
        defer { server.stop() }
        let connection = try server.connect()
        defer { connection.close() }
        let result = Collector<Result<EchoResponse, RPCError>>()
        connection.unary(TestService.park, EchoRequest(payload: [42])) { result.append($0) }
        #expect(server.service.waitForParked(1))
        let shutdown = Background { server.stop(gracePeriodMs: 10_000) }
        #expect(waitUntil { !connection.isUsable }, "the GOAWAY reached the client")
        #expect(throws: RPCError.self) { try connection.unary(DiagnosticsMethods.echo, EchoRequest()) }
        server.service.releaseParked()
        #expect(result.waitForCount(1))
        #expect(try result.items.first?.get().payload == [42])
        try shutdown.wait()
    }

    @Test("a stopped server lets go of its event loops' epoll, eventfd and timerfd")
    func stopReleasesLoops() throws {
        let before = OpenFiles.eventLoopDescriptors
        for _ in 0..<20 {
            let server = try TestServer()
            try server.checkServing()
            server.stop()
        }
        let leaked = OpenFiles.eventLoopDescriptors - before
        // 20 servers of 2 loops hold 120 such descriptors while running; other tests' live
        // servers come and go meanwhile, hence the margin.
        #expect(leaked < 30, "\(leaked) epoll/eventfd/timerfd descriptors left open by 20 stopped servers")
    }
}
