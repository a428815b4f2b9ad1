import ProtoBridge
import RPCCore
import TLSSupport

extension SocketConnection {
    /// Reads when the budget is under pressure are this small, so that the tail of a frame a read
    /// leaves behind (which the connection must keep) stays small too.
    static let pressureReadSize = 4 * 1024

    /// Output one event of a connection may produce before the rest of its input waits for the
    /// next loop turn (plus the reply of the frame that passes it). Pipelined calls with large
    /// replies — compressed Echo calls that inflate to 4 MiB, reflection — made up to the 8 MiB
    /// allowance of output per event, ~95 ms each, and one turn over forty such connections held
    /// a fresh connection for seconds.
    static let outputPerEvent = 1 << 20
    /// Frames one event of a connection consumes before the rest waits for the next loop turn:
    /// what bounds an event of many small calls with costly replies (reflection). Above the
    /// calls a client usually keeps in flight, so an ordinary pipeline never waits.
    static let framesPerEvent = 128

    /// Reads what the socket holds, up to four reads a turn. The registration is level-triggered,
    /// so a read that did not fill its buffer ends the turn: the socket is drained for now, and
    /// anything that arrives later is reported by the next `epoll_wait` (this saves the read that
    /// would only return `EAGAIN`, one system call per request at one call in flight). Frames held
    /// back by backpressure, or by the last event's share of output (`outputPerEvent`), are
    /// consumed first; nothing is read once this event's share is spent.
    ///
    /// Over TLS a read returns at most one record (16 KiB) and OpenSSL reads ahead what the
    /// socket holds: a short read ends the turn only when OpenSSL holds nothing more (what is
    /// still in the socket, `epoll` reports); else reads go on, up to sixteen a turn, and input
    /// left inside OpenSSL then (where `epoll` cannot see it) comes back next turn on a timer due
    /// at once.
    func readAvailable() {
        if state.hasHeldBack { consumeHeldBack() }
        let isTLS = io.session != nil
        for _ in 0..<(isTLS ? 16 : 4) {
            guard state.isReading else { return }
            let outcome: ConnectionIO.Outcome
            let asked: Int
            if partial.isEmpty {
                asked =
                    account.budget.isUnderPressure
                    ? min(Self.pressureReadSize, owner.scratch.readBufferSize) : owner.scratch.readBufferSize
                outcome = owner.scratch.withReadBuffer { buffer in
                    let outcome = io.read(into: buffer.baseAddress!, count: asked)
                    if case .bytes(let n) = outcome {
                        _ = consume(UnsafeRawBufferPointer(rebasing: buffer[0..<n]), keepingRest: true)
                    }
                    return outcome
                }
            } else {
                // Room for the rest of the frame, but at most 64 KiB past what has arrived: a peer
                // that announces a large frame must send it before the server holds it.
                let want = min(max(needed, partial.count + 16 * 1024), partial.count + 64 * 1024)
                let start = partial.count
                // Growth doubles (a frame is not copied whole per read) but stops at the frame's end.
                let capacity =
                    want <= partial.capacity
                    ? partial.capacity : max(want, min(2 * partial.capacity, max(needed, want)))
                if account.budget.isUnderPressure && capacity > partial.capacity
                    && account.held + capacity - partial.capacity > MemoryBudget.smallHolding
                {
                    // The budget is short: the partial frame does not grow until the loop says so.
                    state.budgetShort()
                    owner.inputBlocked(self)
                    updateInterest()
                    return
                }
                asked = want - start
                if capacity > partial.capacity { partial.reserveCapacity(capacity) }
                partial.appendZeros(want - start)
                outcome = partial.withUnsafeMutableBytes { io.read(into: $0.baseAddress! + start, count: want - start) }
                var n = 0
                if case .bytes(let count) = outcome { n = count }
                partial.removeLast(want - start - n)
                if n > 0 {
                    let consumed = partial.withUnsafeBytes { bytes in consume(bytes, keepingRest: false) }
                    partial.removeFirst(consumed)
                }
                settleInbound()
            }
            switch outcome {
            case .bytes(let n):
                observer?.transferred(received: n, sent: 0)
                if n < asked && !(io.session?.hasBufferedInput ?? false) { return }
            case .wouldBlock:
                return
            case .needsOtherDirection:
                state.tlsReadNeedsWritable()
                updateInterest()
                return
            case .closed, .failed:
                close()
                return
            }
        }
        if let tls = io.session, tls.hasBufferedInput {
            loop.scheduleNextTurn { [weak self] in self?.readBufferedInput() }
        }
    }

    /// Input left inside OpenSSL at the end of a turn's reads.
    private func readBufferedInput() {
        loop.assertInEventLoop()
        guard state.isReading else { return }
        readAvailable()
    }

    /// Feeds `bytes` to the core, which stops once the output passes the allowance, or this
    /// event's share of it (`outputPerEvent`). With `keepingRest`, what it did not consume is
    /// copied into `partial`. Returns the bytes consumed.
    func consume(_ bytes: UnsafeRawBufferPointer, keepingRest: Bool) -> Int {
        let limit = written + allowance
        let share = core.pendingOutput + Self.outputPerEvent
        let (consumed, next, actions) = core.receive(
            bytes, outboundLimit: min(limit, share), frameLimit: Self.framesPerEvent)
        needed = next
        if keepingRest && consumed < bytes.count {
            partial.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[consumed...]))
        }
        let closing = core.closeRequested
        if core.awaitsLargeRequest && !closing {
            // The rest waits in `partial` until the large-request pool has taken the request in.
            state.largeRequestTaken()
            state.hasHeldBack = consumed < bytes.count
        } else if core.pendingOutput > limit && !closing {
            // Backpressure mid-batch: the rest waits in `partial` until the output drains.
            _ = state.outputStands(at: core.pendingOutput - written, allowance: allowance)
            state.hasHeldBack = consumed < bytes.count
        } else if next == 0 && consumed < bytes.count && !closing {
            // This event's share of output or frames is spent: the rest waits in `partial` for
            // the next turn.
            state.hasHeldBack = true
            yield()
        }
        carryOut(actions)
        settleInbound()
        // Output that grew by more than a small holding is reserved now, not at the flush: the
        // next connection this turn (on any loop) sees the budget as it is.
        if core.pendingOutput - written - account.outbound > MemoryBudget.smallHolding {
            account.settle(outbound: core.pendingOutput - written)
            noteHolding()
        }
        return consumed
    }

    /// Ends this event's reading and comes back to the held-back input in the loop's next turn
    /// (due at once: after the events already waiting). Input still in the socket is reported
    /// again by the level-triggered registration meanwhile; `readAvailable` takes what is held
    /// back first either way, so frames keep their order.
    func yield() {
        guard state.yielded() else { return }
        resumeNextTurn()
    }

    private func resumeNextTurn() {
        loop.scheduleNextTurn { [weak self] in
            guard let self else { return }
            // Resumes run together in the timer's event: past the turn's budget, wait one more.
            guard !loop.turnOverBudget else { return resumeNextTurn() }
            state.turnResumed()
            if state.isReading { readAvailable() }
        }
    }

    /// Consumes the frames held back in `partial`.
    private func consumeHeldBack() {
        state.hasHeldBack = false
        let consumed = partial.withUnsafeBytes { bytes in consume(bytes, keepingRest: false) }
        partial.removeFirst(consumed)
        settleInbound()
    }

    /// Reads and drops what a lingering connection's peer still sends; closes at its end.
    func dropInput() {
        for _ in 0..<16 {
            let size = owner.scratch.readBufferSize
            let outcome = owner.scratch.withReadBuffer { io.read(into: $0.baseAddress!, count: size) }
            switch outcome {
            case .bytes: continue
            case .wouldBlock, .needsOtherDirection: return
            case .closed, .failed:
                close()
                return
            }
        }
    }
}
