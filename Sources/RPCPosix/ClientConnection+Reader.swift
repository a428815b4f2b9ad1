internal import CSystemShims
internal import Glibc
import RPCCore
import Synchronization
import TLSSupport
import ThreadSupport

/// The reader thread: it waits on the socket and the wake-up eventfd, writes output the socket
/// did not take at once, hands every complete frame to `handle`, and fails calls whose deadline
/// passed. When the connection fails it fails every call still pending, and ends.
extension ClientConnection {
    func startReader(leftover: [UInt8]) {
        // Nobody joins the reader (it ends on its own when the connection closes): detached, it
        // gives its stack back, instead of keeping it mapped for every connection ever opened.
        WorkerThread.detached(name: "mrpc-client") { [self] in
            readLoop(ReceiveBuffer(leftover))
        }
    }

    /// Dispatches every complete frame, then waits for more, until the connection fails; then
    /// fails every call still pending with that error.
    private func readLoop(_ leftover: ReceiveBuffer) {
        var received = leftover
        let failure: RPCError
        do throws(RPCError) {
            while true {
                while let (header, payload) = try received.nextFrame(limit: options.frameLimit) {
                    handle(header, payload)
                }
                try waitAndRead(into: &received, timeoutMs: expireDeadlines())
            }
        } catch {
            failure = error
        }
        // Our end closes too: a server that ended the connection (a GOAWAY at shutdown, then end
        // of stream) waits for that before it lets go of the socket.
        shutdown(fd, Int32(SHUT_RDWR))
        let pending = state.withLock { state -> [PendingCall] in
            state.closed = failure
            defer { state.calls.removeAll() }
            return Array(state.calls.values)
        }
        for call in pending { call.fail(failure) }
    }

    /// Waits for the socket (readable, or writable while output waits) or a wake-up; writes what
    /// waits and appends what arrived.
    private func waitAndRead(into received: inout ReceiveBuffer, timeoutMs: Int32) throws(RPCError) {
        if let tls {
            try waitAndRead(through: tls, into: &received, timeoutMs: timeoutMs)
            return
        }
        let wantsOutput = writer.withLock { $0.hasPending }
        var fds = [
            pollfd(fd: fd, events: Int16(POLLIN) | (wantsOutput ? Int16(POLLOUT) : 0), revents: 0),
            pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
        ]
        guard poll(&fds, 2, timeoutMs) > 0 else { return }
        if fds[1].revents != 0 { _ = cshim_eventfd_drain(wakeFD) }
        if fds[0].revents & Int16(POLLOUT) != 0 { _ = writer.withLock { flush(&$0) } }
        guard fds[0].revents & (Int16(POLLIN) | Int16(POLLHUP) | Int16(POLLERR)) != 0 else { return }
        // A read that fills its chunk may have left more behind; a shorter one drained the socket.
        while try received.read(from: fd) == ReceiveBuffer.readSize {}
    }

    /// `waitAndRead` over TLS: the socket is polled without the lock, the session is used under
    /// it. Reads go on while OpenSSL holds input (it reads ahead what the socket has; a `poll`
    /// could not see it) or a read filled its buffer, up to 64 records (1 MiB: their frames are
    /// handled first); input OpenSSL still holds then is read without a `poll`.
    private func waitAndRead(through tls: TLSSession, into received: inout ReceiveBuffer, timeoutMs: Int32)
        throws(RPCError)
    {
        let (wantsOutput, buffered) = writer.withLock { state in
            ((state.hasPending && !state.writeNeedsInput) || state.readNeedsOutput, tls.hasBufferedInput)
        }
        if !buffered {
            var fds = [
                pollfd(fd: fd, events: Int16(POLLIN) | (wantsOutput ? Int16(POLLOUT) : 0), revents: 0),
                pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
            ]
            guard poll(&fds, 2, timeoutMs) > 0 else { return }
            if fds[1].revents != 0 { _ = cshim_eventfd_drain(wakeFD) }
            var readable = fds[0].revents & (Int16(POLLIN) | Int16(POLLHUP) | Int16(POLLERR)) != 0
            if fds[0].revents & Int16(POLLOUT) != 0 {
                let readWaited = writer.withLock { state in
                    defer { state.readNeedsOutput = false }
                    if !state.writeNeedsInput { _ = flush(&state) }
                    return state.readNeedsOutput
                }
                readable = readable || readWaited
            }
            guard readable else { return }
        }
        for _ in 0..<64 {
            let (count, buffered) = try writer.withLock { state throws(RPCError) -> (Int, Bool) in
                let (count, needsOutput) = try received.read(from: tls)
                state.readNeedsOutput = needsOutput
                if state.writeNeedsInput {
                    state.writeNeedsInput = false
                    _ = flush(&state)
                }
                return (count, tls.hasBufferedInput)
            }
            if count < ReceiveBuffer.tlsReadSize && !buffered { return }
        }
    }

    /// Fails calls past their deadline (the server is sent CANCEL); returns the poll timeout
    /// until the next deadline, in ms (at most a second).
    private func expireDeadlines() -> Int32 {
        // Inflaters of streams that ended elsewhere (cancelled, failed) go too.
        if inflaters.hasStreams {
            let live = state.withLock { Set($0.calls.keys) }
            inflaters.drop { !live.contains($0) }
        }
        let now = monotonicNow()
        let (expired, next) = state.withLock { state in
            var expired: [UInt32] = []
            var next: UInt64 = .max
            for (id, call) in state.calls {
                guard let deadline = call.deadline else { continue }
                if deadline <= now { expired.append(id) } else { next = min(next, deadline) }
            }
            return (expired, next)
        }
        for id in expired { abandon(id, failing: .deadlineExceeded("the call's deadline passed (client side)")) }
        return next == .max ? 1_000 : Int32(min(1_000, (next - now) / 1_000_000 + 1))
    }
}
