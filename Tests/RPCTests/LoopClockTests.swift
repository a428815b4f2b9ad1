import HTTP2Support
import ProtoBridge
import RPCCore
import RPCMessages
import Synchronization
import TestSupport
import Testing
import ThreadSupport

@testable import RPCPosix

/// The event loop's timers on a `ManualClock`: the test moves the time, and the loops run what
/// came due. Every connection timeout (handshake, idle, keepalive, the rest of a frame, a call's
/// deadline) is checked one millisecond before and at its moment, over a real socket, without
/// sleeping through it.
@Suite("Loop timers on a manual clock: handshake, idle, keepalive, frame timeout, deadlines")
struct LoopClockTests {
    /// A connection that is still open and has sent nothing: what "not yet" looks like.
    private func quiet(_ raw: RawConnection) throws -> Bool {
        try raw.availableFrame(waitMs: 20) == nil
    }

    @Test("a loop's timers fire when the clock reaches them, in order; a repeating one catches up")
    func loopTimers() throws {
        let clock = ManualClock()
        let loop = try EventLoop(index: 0, clock: clock)
        loop.start(name: "clock-test")
        defer { loop.stopAndWait() }
        let fired = Mutex<[String]>([])
        let start = clock.now
        let scheduled = BlockingFlag()
        loop.execute {
            _ = loop.schedule(at: start + 20_000_000) { fired.withLock { $0.append("b") } }
            _ = loop.schedule(at: start + 10_000_000) { fired.withLock { $0.append("a") } }
            _ = loop.scheduleRepeating(every: 1_000_000_000) {
                fired.withLock { $0.append("tick") }
                return true
            }
            scheduled.set()
        }
        scheduled.wait()
        func settle() {
            let done = BlockingFlag()
            loop.execute { done.set() }
            done.wait()
        }
        settle()
        #expect(fired.withLock { $0 }.isEmpty, "nothing is due before the clock moves")
        clock.advance(ms: 15)
        settle()
        #expect(fired.withLock { $0 } == ["a"])
        clock.advance(ms: 5)
        settle()
        #expect(fired.withLock { $0 } == ["a", "b"])
        clock.advance(ms: 3_000)
        settle()
        #expect(fired.withLock { $0 } == ["a", "b", "tick", "tick", "tick"])
    }

    @Test(
        "a connection that never finishes the handshake closes at the handshake timeout, not before",
        arguments: [0, Preface.size, Preface.size + 5])
    func handshakeTimeout(bytesSent: Int) throws {
        var limits = ServerLimits()
        limits.handshakeTimeoutMs = 10_000
        let server = try TestServer(limits: limits, clock: ManualClock())
        defer { server.stop() }
        let raw = try server.raw()
        try raw.send(Array(Frames.opening().prefix(bytesSent)))
        #expect(server.waitForConnections(1))
        server.advance(ms: 9_999)
        #expect(try quiet(raw))
        server.advance(ms: 1)
        #expect(try raw.expectClose(timeoutMs: 2_000).isEmpty)
        #expect(server.waitForConnections(0))
    }

    @Test("an authenticated connection with no call gets GOAWAY UNAVAILABLE at the idle timeout")
    func idleTimeout() throws {
        var limits = ServerLimits()
        limits.idleTimeoutMs = 300_000
        let server = try TestServer(limits: limits, clock: ManualClock())
        defer { server.stop() }
        let (raw, ack) = try server.rawOpen()
        #expect(ack.idleTimeoutMs == 300_000)
        server.advance(ms: 299_999)
        #expect(try quiet(raw))
        server.advance(ms: 1)
        let frames = try raw.expectClose(timeoutMs: 2_000)
        #expect(frames.count == 1)
        #expect(try #require(frames.first).goaway().status?.code == StatusCode.unavailable.rawValue)
    }

    @Test("a quiet peer with a call in flight gets a keepalive PING, and is closed when it does not answer")
    func keepalive() throws {
        var limits = ServerLimits()
        limits.keepaliveIntervalMs = 60_000
        limits.keepaliveTimeoutMs = 20_000
        let server = try TestServer(limits: limits, clock: ManualClock())
        defer {
            server.service.releaseParked()
            server.stop()
        }
        let (raw, _) = try server.rawOpen()
        try raw.send(Frames.call(streamID: 1, TestService.park, EchoRequest(payload: [1])))
        #expect(server.service.waitForParked(1))
        server.advance(ms: 59_999)
        #expect(try quiet(raw))
        server.advance(ms: 1)
        let ping = try raw.expectFrame(timeoutMs: 2_000)
        #expect(ping.type == .ping)
        server.advance(ms: 19_999)
        #expect(try quiet(raw))
        server.advance(ms: 1)
        _ = try raw.expectClose(timeoutMs: 2_000)
    }

    @Test("a frame begun must end within the frame timeout: GOAWAY DEADLINE_EXCEEDED, then close")
    func frameTimeout() throws {
        var limits = ServerLimits()
        limits.frameTimeoutMs = 30_000
        let server = try TestServer(limits: limits, clock: ManualClock())
        defer { server.stop() }
        let (raw, _) = try server.rawOpen()
        try raw.send(Array(Frames.echo(streamID: 1, [1, 2, 3]).prefix(15)))
        server.advance(ms: 29_999)
        #expect(try quiet(raw))
        server.advance(ms: 1)
        let frames = try raw.expectClose(timeoutMs: 2_000)
        #expect(try #require(frames.last).goaway().status?.code == StatusCode.deadlineExceeded.rawValue)
    }

    @Test("a call past its deadline gets DEADLINE_EXCEEDED at the deadline, and its handler is told")
    func callDeadline() throws {
        let server = try TestServer(clock: ManualClock())
        defer {
            server.service.releaseParked()
            server.stop()
        }
        let (raw, _) = try server.rawOpen()
        try raw.send(Frames.call(streamID: 1, TestService.park, EchoRequest(payload: [1]), timeoutMs: 500))
        #expect(server.service.waitForParked(1))
        server.advance(ms: 499)
        #expect(try quiet(raw))
        server.advance(ms: 1)
        let reply = try raw.expectFrame(timeoutMs: 2_000)
        #expect(reply.type == .reply)
        #expect(try reply.replyError()?.code == .deadlineExceeded)
        #expect(server.service.waitForTermination(of: 1) == .deadlineExceeded)
    }
}

/// The same timers for a gRPC connection on the same port: the core's lifecycle is shared, and
/// these check that its timers reach the HTTP/2 wire — GOAWAY and close, PING, a stream ended
/// with its status — at their moment and not before.
@Suite("Loop timers on a manual clock, gRPC: handshake, idle, keepalive, request timeout, deadlines")
struct GRPCLoopClockTests {
    static let key = "\(Frames.appID):\(Frames.apiKey)"
    static let echo = GRPCSessionHarness.frame(EchoRequest(payload: [1, 2, 3]).serializedBytes())

    /// A call that completed, so the connection is authenticated and idle.
    private func served(_ server: TestServer) throws -> GRPCSocketClient {
        let client = try GRPCSocketClient(port: server.port)
        let id = try client.call(DiagnosticsMethods.echo.path, message: Self.echo, apiKey: Self.key)
        #expect(try client.exchange(untilMs: 2_000) { client.ending(of: id) != nil })
        return client
    }

    @Test("a connection that sends no request closes at the handshake timeout, not before", arguments: [false, true])
    func handshakeTimeout(preface: Bool) throws {
        var limits = ServerLimits()
        limits.handshakeTimeoutMs = 10_000
        let server = try TestServer(limits: limits, clock: ManualClock())
        defer { server.stop() }
        let client = try GRPCSocketClient(port: server.port, preface: preface)
        #expect(server.waitForConnections(1))
        // The server's SETTINGS answer the client's preface at once.
        #expect(try client.exchange(untilMs: 2_000) { !preface || !client.frameTypes.isEmpty })
        server.advance(ms: 9_999)
        #expect(try client.isQuiet(), "nothing before the timeout: \(client.frameTypes)")
        server.advance(ms: 1)
        #expect(try client.closes())
        if preface { #expect(client.frameTypes.contains(GRPCSocketClient.goaway), "\(client.frameTypes)") }
    }

    @Test("an authenticated connection with no call in flight gets GOAWAY at the idle timeout, then closes")
    func idleTimeout() throws {
        var limits = ServerLimits()
        limits.idleTimeoutMs = 300_000
        let server = try TestServer(limits: limits, clock: ManualClock())
        defer { server.stop() }
        let client = try served(server)
        server.advance(ms: 299_999)
        #expect(try client.isQuiet())
        server.advance(ms: 1)
        #expect(try client.closes())
        #expect(client.frameTypes.contains(GRPCSocketClient.goaway), "\(client.frameTypes)")
    }

    @Test("a quiet peer with a call in flight gets a PING, and is closed when it does not answer")
    func keepalive() throws {
        var limits = ServerLimits()
        limits.keepaliveIntervalMs = 60_000
        limits.keepaliveTimeoutMs = 20_000
        let server = try TestServer(limits: limits, clock: ManualClock())
        defer {
            server.service.releaseParked()
            server.stop()
        }
        let client = try GRPCSocketClient(port: server.port)
        try client.call(TestService.park.path, message: Self.echo, apiKey: Self.key)
        #expect(server.service.waitForParked(1))
        _ = try client.exchange()
        server.advance(ms: 59_999)
        #expect(try client.isQuiet())
        server.advance(ms: 1)
        #expect(try client.exchange(waitMs: 2_000, answer: false).contains(GRPCSocketClient.ping))
        server.advance(ms: 19_999)
        #expect(try client.isQuiet())
        server.advance(ms: 1)
        #expect(try client.closes())
    }

    @Test("a request whose message never ends: DEADLINE_EXCEEDED at the request timeout, the connection stays")
    func requestTimeout() throws {
        var limits = ServerLimits()
        limits.requestTimeoutMs = 30_000
        limits.keepaliveIntervalMs = 600_000
        let server = try TestServer(limits: limits, clock: ManualClock())
        defer { server.stop() }
        let client = try served(server)
        let open = try client.call(
            DiagnosticsMethods.echo.path, message: Array(Self.echo.prefix(6)), apiKey: Self.key, end: false)
        _ = try client.exchange()
        server.advance(ms: 29_999)
        #expect(try client.isQuiet())
        #expect(client.ending(of: open) == nil)
        server.advance(ms: 1_000)
        #expect(try client.exchange(untilMs: 2_000) { client.ending(of: open) != nil })
        let ending = try #require(client.ending(of: open))
        #expect(ending.first(named: "grpc-status") == String(StatusCode.deadlineExceeded.rawValue))
        #expect(!client.raw.peerClosed)
    }

    @Test("grpc-timeout: DEADLINE_EXCEEDED at the deadline, and the handler is told")
    func callDeadline() throws {
        let server = try TestServer(clock: ManualClock())
        defer {
            server.service.releaseParked()
            server.stop()
        }
        let client = try GRPCSocketClient(port: server.port)
        let id = try client.call(
            TestService.park.path, message: Self.echo, apiKey: Self.key, extra: [HTTP2Header("grpc-timeout", "500m")])
        #expect(server.service.waitForParked(1))
        _ = try client.exchange()
        server.advance(ms: 499)
        #expect(try client.isQuiet())
        server.advance(ms: 1)
        #expect(try client.exchange(untilMs: 2_000) { client.ending(of: id) != nil })
        let ending = try #require(client.ending(of: id))
        #expect(ending.first(named: "grpc-status") == String(StatusCode.deadlineExceeded.rawValue))
        #expect(server.service.waitForTermination(of: UInt32(id)) == .deadlineExceeded)
    }
}

/// A one-shot flag a test thread waits on while a loop sets it.
final class BlockingFlag: Sendable {
    private let semaphore = BlockingSemaphore()

    func set() { semaphore.signal() }
    func wait() { semaphore.wait() }
}
