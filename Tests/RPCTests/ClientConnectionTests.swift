import Glibc
import ProtoBridge
import RPCCore
import RPCMessages
import RPCPosix
import TestSupport
import Testing

/// The client library: concurrency on one connection, replies matched by stream id, the async
/// API, reconnection, GOAWAY, its own deadlines, cancellation — against the real server, or a fake
/// one (a raw socket) where the test must choose exactly what the server says.
@Suite("Client library: ClientConnection and RPCClient")
struct ClientConnectionTests {
    /// A payload that names its thread and call, so a reply matched to the wrong call shows.
    static func payload(thread: Int, call: Int) -> [UInt8] {
        Array("thread \(thread) call \(call)".utf8)
            + [UInt8](repeating: UInt8(truncatingIfNeeded: call), count: call % 200)
    }

    @Test("many threads calling at once on one connection each get their own replies")
    func manyThreads() throws {
        let server = try TestServer()
        defer { server.stop() }
        let connection = try server.connect()
        defer { connection.close() }
        let mismatches = try Background<Int>.all(8) { thread in
            var wrong = 0
            for call in 0..<100 {
                let sent = Self.payload(thread: thread, call: call)
                let reply = try? connection.unary(
                    DiagnosticsMethods.echo, EchoRequest(payload: sent), options: CallOptions(timeoutMs: 10_000))
                if reply?.payload != sent { wrong += 1 }
            }
            return wrong
        }
        #expect(mismatches == [Int](repeating: 0, count: 8))
        #expect(connection.pendingCallCount == 0)
    }

    @Test("a closed connection's reader thread ends and releases its stack: 128 connections do not keep 128 stacks")
    func readerThreadsReleased() throws {
        let server = try TestServer()
        defer { server.stop() }
        func connectCallClose() throws {
            let connection = try server.connect()
            _ = try connection.unary(
                DiagnosticsMethods.echo, EchoRequest(payload: [1]), options: CallOptions(timeoutMs: 10_000))
            connection.close()
        }
        for _ in 0..<8 { try connectCallClose() } // warm-up: glibc keeps a cache of freed stacks
        usleep(200_000)
        let before = Memory.virtualSize
        for _ in 0..<128 { try connectCallClose() }
        usleep(500_000) // the readers see the close and end
        // The smallest of several samples: other suites' threads come and go meanwhile (under
        // AddressSanitizer their stacks and shadow weigh more), while a stack nobody released
        // stays mapped in every sample.
        var grown = Int.max
        for _ in 0..<10 {
            grown = min(grown, Memory.virtualSize - before)
            usleep(100_000)
        }
        let stack = Memory.defaultThreadStack
        print(
            "128 client connections opened and closed: address space grew \(grown >> 20) MiB (thread stack \(stack >> 20) MiB)"
        )
        // A joinable reader nobody joins would keep 128 stacks mapped; other suites' threads
        // running meanwhile (their stacks, and the 64 MiB malloc arenas new threads may open)
        // account for the allowance of half that.
        #expect(
            grown < 64 * stack,
            "address space grew \(grown >> 20) MiB: the reader threads kept their \(stack >> 20) MiB stacks")
    }

    @Test("1 000 calls in flight at once on one connection complete with their own replies")
    func thousandInFlight() throws {
        let server = try TestServer()
        defer { server.stop() }
        let connection = try server.connect()
        defer { connection.close() }
        #expect(connection.helloAck.maxConcurrentCalls >= 1_000)
        let results = Collector<(Int, Result<EchoResponse, RPCError>)>()
        for call in 0..<1_000 {
            connection.unary(TestService.park, EchoRequest(payload: Self.payload(thread: 0, call: call))) {
                results.append((call, $0))
            }
        }
        #expect(server.service.waitForParked(1_000, timeoutMs: 20_000))
        #expect(connection.pendingCallCount == 1_000)
        #expect(results.count == 0)
        #expect(server.service.releaseParked() == 1_000)
        #expect(results.waitForCount(1_000, timeoutMs: 20_000))
        let wrong = results.items.filter { call, result in
            (try? result.get().payload) != Self.payload(thread: 0, call: call)
        }
        #expect(wrong.isEmpty, "\(wrong.count) calls got another call's reply or an error")
    }

    @Test("replies arriving in any order are matched to their calls by stream id")
    func repliesOutOfOrder() throws {
        let listener = try RawListener()
        let (client, server) = try listener.connectClient()
        defer { client.close() }
        let results = Collector<(Int, Result<EchoResponse, RPCError>)>()
        for call in 0..<5 {
            client.unary(DiagnosticsMethods.echo, EchoRequest(payload: [UInt8(call)])) { results.append((call, $0)) }
        }
        var calls: [(UInt32, [UInt8])] = []
        for _ in 0..<5 {
            let frame = try server.expectFrame()
            calls.append((frame.streamID, try EchoRequest(serializedBytes: frame.call().body).payload))
        }
        #expect(calls.map(\.0) == calls.map(\.0).sorted(), "stream ids go out increasing")
        for (streamID, payload) in calls.reversed() {
            try server.send(Frames.reply(streamID: streamID, EchoResponse(payload: payload)))
        }
        #expect(results.waitForCount(5))
        for (call, result) in results.items { #expect(try result.get().payload == [UInt8(call)]) }
    }

    @Test("a server that stops reading cannot block callers: deadlines still fire and other calls fail fast")
    func serverThatDoesNotRead() throws {
        let listener = try RawListener()
        let (client, server) = try listener.connectClient()
        defer { client.close() }
        _ = server // accepted and handshaken, then never read again
        let big = EchoRequest(payload: [UInt8](repeating: 1, count: 1 << 20))
        let results = Collector<(Int, Result<EchoResponse, RPCError>)>()
        let started = monotonicNow()
        // Far more than the socket buffers hold: the calls must queue, not block this thread.
        for call in 0..<32 {
            client.unary(DiagnosticsMethods.echo, big, options: CallOptions(timeoutMs: 300)) {
                results.append((call, $0))
            }
        }
        // Blocked on the socket, the calls past what the buffers hold would each take a deadline
        // (all 32: 9.6 s). Queuing them takes ~50 ms; the limit leaves room for a loaded 2-core
        // machine (634 ms seen beside a soak) and a sanitizer's slowdown (32 MiB are encoded here).
        #expect(
            Double(monotonicNow() - started) / 1e6 < 2_000 * Sanitizer.timeScale,
            "starting calls does not wait for the socket")
        #expect(results.waitForCount(32, timeoutMs: 5_000), "every call ends at its deadline")
        for (_, result) in results.items {
            if case .failure(let error) = result {
                #expect(error.code == .deadlineExceeded)
            } else {
                Issue.record("a call succeeded")
            }
        }
    }

    @Test("the async API runs many calls concurrently")
    func asyncCalls() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let connection = try server.connect()
        defer { connection.close() }
        let replies = try await withThrowingTaskGroup(of: Bool.self) { group in
            for call in 0..<100 {
                group.addTask {
                    let sent = Self.payload(thread: 1, call: call)
                    return try await connection.unary(DiagnosticsMethods.echo, EchoRequest(payload: sent)).payload
                        == sent
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(replies.count == 100 && replies.allSatisfy { $0 })
        // Errors arrive as typed throws too.
        do {
            _ = try await connection.unary(TestService.park, EchoRequest(), options: CallOptions(timeoutMs: 100))
            Issue.record("a parked call must not succeed")
        } catch {
            #expect(error.code == .deadlineExceeded)
        }
        server.service.releaseParked()
    }

    @Test("RPCClient opens a new connection after the server closed the old one")
    func reconnects() throws {
        var limits = ServerLimits()
        limits.idleTimeoutMs = 300_000
        let server = try TestServer(limits: limits, clock: ManualClock())
        defer { server.stop() }
        let client = RPCClient(options: server.clientOptions)
        defer { client.close() }
        #expect(try client.unary(DiagnosticsMethods.echo, EchoRequest(payload: [1])).payload == [1])
        let first = try client.connection()
        server.advance(ms: 300_000)
        #expect(waitUntil(timeoutMs: 5_000) { !first.isUsable }, "the server closed the idle connection")
        #expect(throws: RPCError.self) { try first.unary(DiagnosticsMethods.echo, EchoRequest()) }
        #expect(try client.unary(DiagnosticsMethods.echo, EchoRequest(payload: [2])).payload == [2])
        #expect(try client.connection() !== first)
    }

    @Test("GOAWAY fails the calls above its last stream with UNAVAILABLE; those below still complete")
    func goawayFailsLaterCalls() throws {
        let listener = try RawListener()
        let (client, server) = try listener.connectClient()
        defer { client.close() }
        let results = Collector<(Int, Result<EchoResponse, RPCError>)>()
        for call in 0..<3 {
            client.unary(DiagnosticsMethods.echo, EchoRequest(payload: [UInt8(call)])) { results.append((call, $0)) }
        }
        let ids = try (0..<3).map { _ in try server.expectFrame().streamID }
        try server.send(Frames.goaway(lastStreamID: ids[0], error: .unavailable("going away")))
        #expect(results.waitForCount(2))
        for (call, result) in results.items {
            #expect(call != 0)
            #expect(throws: RPCError.self) { try result.get() }
            if case .failure(let error) = result {
                #expect(error.code == .unavailable)
                #expect(error.message.contains("retried"))
            }
        }
        #expect(!client.isUsable)
        #expect {
            try client.unary(DiagnosticsMethods.echo, EchoRequest())
        } throws: { ($0 as? RPCError)?.code == .unavailable }
        try server.send(Frames.reply(streamID: ids[0], EchoResponse(payload: [0])))
        #expect(results.waitForCount(3))
        #expect(try results.items.last?.1.get().payload == [0])
        #expect(try server.staysQuiet(forMs: 100), "no call may be sent after GOAWAY")
    }

    @Test("the client enforces its own deadline when the server does not answer, and sends CANCEL")
    func clientDeadline() throws {
        let listener = try RawListener()
        let (client, server) = try listener.connectClient()
        defer { client.close() }
        let started = Clock.nowMs
        #expect {
            try client.unary(DiagnosticsMethods.echo, EchoRequest(payload: [1]), options: CallOptions(timeoutMs: 200))
        } throws: { error in
            (error as? RPCError)?.code == .deadlineExceeded
                && (error as? RPCError)?.message.contains("client side") == true
        }
        let waited = Clock.nowMs - started
        #expect(waited >= 190 && waited < 2_000, "the call failed after \(waited) ms for a 200 ms deadline")
        let call = try server.expectFrame()
        #expect(try call.call().header.timeoutMs == 200, "the deadline travels to the server too")
        let cancel = try server.expectFrame()
        #expect(cancel.type == .cancel)
        #expect(cancel.streamID == call.streamID)
        #expect(client.pendingCallCount == 0)
        // A reply arriving after the deadline is ignored.
        try server.send(Frames.reply(streamID: call.streamID, EchoResponse(payload: [1])))
        #expect(client.isUsable)
    }

    @Test("when the server closes the connection, calls in flight fail UNAVAILABLE")
    func serverCloses() throws {
        let listener = try RawListener()
        let (client, server) = try listener.connectClient()
        defer { client.close() }
        let results = Collector<Result<EchoResponse, RPCError>>()
        client.unary(DiagnosticsMethods.echo, EchoRequest()) { results.append($0) }
        _ = try server.expectFrame()
        server.close()
        #expect(results.waitForCount(1))
        #expect {
            try results.items.first?.get()
        } throws: { ($0 as? RPCError)?.code == .unavailable }
        #expect(waitUntil { !client.isUsable })
    }

    @Test("a stream cancelled by the client ends CANCELLED; the server's handler is told and its sends fail")
    func clientCancelsStream() throws {
        let server = try TestServer()
        defer { server.stop() }
        let connection = try server.connect()
        defer { connection.close() }
        let messages = Collector<[UInt8]>()
        let end = Collector<RPCError?>()
        let stream = connection.serverStream(
            TestService.follow, EchoRequest(), onMessage: { messages.append($0.payload) },
            onEnd: { end.append($0) })
        #expect(messages.waitForCount(1))
        #expect(server.service.send(on: stream.streamID, seq: 2) == .sent)
        #expect(messages.waitForCount(2))
        stream.cancel()
        #expect(end.waitForCount(1))
        #expect(end.items.first??.code == .cancelled)
        #expect(server.service.waitForTermination(of: stream.streamID) == .cancelled)
        #expect(server.service.send(on: stream.streamID, seq: 3) == .closed)
        #expect(messages.count == 2)
        #expect(try connection.unary(DiagnosticsMethods.echo, EchoRequest(payload: [9])).payload == [9])
    }
}
