internal import Glibc
import RPCCore
import TLSSupport
import ThreadSupport

extension SocketConnection {
    /// HTTP/2's output is taken from the wire while less than this waits for the socket, so a
    /// peer that grants huge windows and never reads cannot make the server copy everything it
    /// has queued into the output at once.
    static let outputTakenBelow = 256 * 1024

    /// How long a closing connection reads and drops its peer's input before it closes anyway.
    static let lingerNanoseconds: UInt64 = 1_000_000_000

    func markDirty() {
        guard !isDirty, !state.isClosed else { return }
        isDirty = true
        loop.markDirty(self)
    }

    /// Its core, whose output `flush` writes.
    func prefetchReached() {
        MemoryHint.prefetch(core, lines: 2)
    }

    func flush() {
        loop.assertInEventLoop()
        isDirty = false
        guard !state.isClosed, !state.isLingering else { return }
        if state.isHandshaking {
            // Nothing is written before the TLS handshake completes; a core that gives up on the
            // connection before then (the handshake timeout, a drain) closes it at once.
            if state.closeRequested || core.closeRequested { close() }
            return
        }
        if core.outbound.count - written < Self.outputTakenBelow { core.takeOutput() }
        if state.canWrite && written < core.outbound.count {
            let total = core.outbound.count
            writing: while written < total {
                let outcome = core.outbound.withUnsafeBytes { bytes in
                    io.send(from: bytes.baseAddress! + written, count: total - written)
                }
                switch outcome {
                case .bytes(let n):
                    written += n
                    sentAny = true
                    observer?.transferred(received: 0, sent: n)
                case .wouldBlock:
                    state.writeBlocked(needsInput: false)
                    break writing
                case .needsOtherDirection:
                    state.writeBlocked(needsInput: true)
                    break writing
                case .closed, .failed:
                    close()
                    return
                }
            }
            if written == total {
                core.outbound.removeAll(keepingCapacity: core.outbound.capacity <= 256 * 1024)
                written = 0
            } else if written > 1024 * 1024 {
                core.outbound.removeFirst(written)
                written = 0
            }
        }
        let unwritten = core.outbound.count - written
        let pending = unwritten + core.queuedBytes
        port.publishOutbound(pending)
        if unwritten == 0 && (state.closeRequested || core.closeRequested) && !core.hasPendingOutput {
            lingerThenClose()
            return
        }
        if pending != account.outbound {
            account.settle(outbound: pending)
            noteHolding()
        }
        // The calls' heads held went down as calls ended.
        settleInbound()
        // More HTTP/2 output waits (it was not taken while the socket had plenty): next turn.
        if unwritten < Self.outputTakenBelow && core.hasPendingOutput && state.canWrite { markDirty() }
        updateInterest()
    }

    /// Watches the socket for what the connection waits for now, and reads again when the output
    /// drained enough.
    func updateInterest() {
        guard let registration, !state.isClosed else { return }
        let wasReading = state.isReading
        let unwritten = core.outbound.count - written
        _ = state.outputStands(at: unwritten + core.queuedBytes, allowance: allowance)
        let events = state.interest(pendingOutput: unwritten)
        if events != registeredEvents {
            do throws(SystemError) {
                try loop.modify(fd: fd, registration: registration, events: events)
            } catch {
                logger.warning(
                    "closing connection: cannot change what its socket is watched for",
                    [("peer", peer), ("error", error.description)])
                close()
                return
            }
            registeredEvents = events
        }
        if state.isReading && !wasReading { readAvailable() }
    }

    /// Closes after the core's last bytes were written: the write side first (the peer reads the
    /// GOAWAY, then end of stream), then input is dropped until the peer closes or
    /// `lingerNanoseconds` pass. A connection that never got a byte from the server (a silent
    /// one, cut at the handshake timeout) has nothing to protect and closes at once, as does a
    /// TLS one (its close_notify says the end).
    private func lingerThenClose() {
        guard let registration, sentAny, io.session == nil else { return close() }
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
        state.startLinger()
        partial = []
        settleInbound()
        do throws(SystemError) {
            try loop.modify(fd: fd, registration: registration, events: [.input, .readHangUp])
            registeredEvents = [.input, .readHangUp]
        } catch {
            return close()
        }
        lingerTimer = loop.schedule(at: loop.now + Self.lingerNanoseconds) { [unowned self] in
            lingerTimer = nil
            close()
        }
    }
}
