/// The transport's events outside input and completions — timers, shutdown, the connection's
/// end — and the state machine's actions carried out.
extension ConnectionCore {
    // MARK: Timers

    /// The deadline timer fired: every call whose deadline has passed gets DEADLINE_EXCEEDED (its
    /// handler is told), and the timer is asked for the earliest deadline left.
    public func expireDeadlines(now: UInt64) -> TransportActions {
        self.now = now
        armedDeadline = .max
        var expired: [UInt32] = []
        var next: (deadline: UInt64, streamID: UInt32)?
        for (streamID, live) in calls {
            guard let deadline = live.deadline else { continue }
            if deadline <= now {
                expired.append(streamID)
            } else if deadline < next?.deadline ?? .max {
                next = (deadline, streamID)
            }
        }
        for streamID in expired.sorted() {
            end(streamID, .deadlineExceeded("the call's deadline passed"), termination: .deadlineExceeded)
        }
        if let next {
            armedDeadline = next.deadline
            deadlineToArm = TransportActions.DeadlineTimer(deadline: next.deadline, streamID: next.streamID)
        }
        return transportActions()
    }

    /// The periodic check: the handshake, idle, keepalive and frame timers (the state machine's),
    /// and the time each call's request has to arrive whole.
    public func tick(now: UInt64) -> TransportActions {
        self.now = now
        expireIncompleteRequests()
        perform(machine.tick(now: now, callsInFlight: !calls.isEmpty))
        return transportActions()
    }

    /// Ends the calls whose request has not arrived whole within the request timeout (the
    /// handshake timeout without a key): a peer that opens streams and never ends them holds
    /// their heads for that long at most.
    private func expireIncompleteRequests() {
        let timeoutMs =
            machine.isAnonymous ? min(limits.handshakeTimeoutMs, limits.requestTimeoutMs) : limits.requestTimeoutMs
        let limit = UInt64(timeoutMs) * 1_000_000
        while receivingStart < receivingOrder.count {
            let (streamID, since) = receivingOrder[receivingStart]
            guard calls[streamID]?.receiving ?? false else {
                receivingStart += 1
                continue
            }
            guard ConnectionStateMachine.elapsed(now, since: since) >= limit else { break }
            receivingStart += 1
            end(
                streamID, .deadlineExceeded("the request did not arrive whole within \(timeoutMs) ms of its head"),
                termination: .deadlineExceeded)
        }
        if receivingStart > 64 && receivingStart * 2 > receivingOrder.count {
            receivingOrder.removeFirst(receivingStart)
            receivingStart = 0
        }
    }

    /// Ends a live call from outside with `error` (unless it already completed) and tells its
    /// handler why.
    private func end(_ streamID: UInt32, _ error: RPCError, termination: CallTermination) {
        guard let live = calls[streamID], live.call.complete(error) else { return }
        writeEnd(streamID, error)
        live.call.terminate(termination)
    }

    // MARK: Shutdown

    /// Starts a graceful shutdown: GOAWAY naming the last stream the server will finish, streams
    /// told to end (their handlers finish them with UNAVAILABLE and where to resume), new calls
    /// refused. The connection closes once every call has completed.
    public func beginDrain() -> TransportActions {
        perform(machine.beginDrain(callsInFlight: !calls.isEmpty))
        return transportActions()
    }

    /// Ends every stream still open after the drain's grace period with UNAVAILABLE (and calls
    /// whose request is still arriving, which will not run now).
    public func forceEndStreams() -> TransportActions {
        let error = RPCError.unavailable("the server is shutting down")
        for (streamID, live) in calls where live.isStream || live.receiving {
            guard live.call.complete(error) else { continue }
            writeEnd(streamID, error)
        }
        perform(machine.streamsForceEnded(callsInFlight: !calls.isEmpty))
        return transportActions()
    }

    /// The connection is gone: its live calls end (the first `callsEndedAtOnce` now, the rest
    /// through `endClosedCalls` while `hasCallsToEnd`), and the app's count of connections drops.
    public func connectionClosed() {
        perform(machine.transportClosed())
        codec?.connectionClosed()
        if countedInApp {
            countedInApp = false
            environment.appConnections?.close(app: authenticatedApp)
        }
    }

    /// Calls a closing connection ends at once; the rest wait for `endClosedCalls`. Ending a call
    /// runs its termination handlers (a subscription's release, say): a connection closing with
    /// thousands of streams would hold its event loop, and every other connection on it, for as
    /// long as all of them take, so the transport ends them a slice per loop turn.
    public static let callsEndedAtOnce = 32

    /// A closed connection still has calls to end (`endClosedCalls`).
    public var hasCallsToEnd: Bool { !callsToEnd.isEmpty }

    /// Ends up to `limit` more of a closed connection's calls; returns how many it ended.
    @discardableResult
    public func endClosedCalls(limit: Int) -> Int { callsToEnd.end(limit: limit) }

    private func endAllCalls() {
        callsToEnd.append(contentsOf: calls.values.map(\.call))
        calls.removeAll()
        heldHeadBytes = 0
        receivingOrder = []
        receivingStart = 0
        endClosedCalls(limit: Self.callsEndedAtOnce)
    }

    // MARK: Carrying out the state machine's actions

    func perform(_ action: ConnectionStateMachine.Action) {
        switch action {
        case .none:
            break
        case .sendPing(let token):
            codec?.writePing(token: token)
        case .sendGoawayAndDrain(let error):
            codec?.writeGoaway(lastStreamID: lastStreamID, error: error, closing: false)
            for live in calls.values where live.isStream { live.call.terminate(.draining) }
        case .sendGoawayAndClose(let error, let reason):
            log(closing: reason, error)
            codec?.writeGoaway(lastStreamID: lastStreamID, error: error, closing: true)
            endAllCalls()
        case .close(let reason):
            log(closing: reason, nil)
            codec?.writeClosing(reason)
            endAllCalls()
        }
    }

    /// One rule for both wires: what a closing connection logs. What a peer can cause before it
    /// authenticated (a bad preface, a broken frame, a silent connection) goes through the
    /// authentication throttle, so a flood of such connections writes a summary, not a line each.
    private func log(closing reason: ConnectionStateMachine.CloseReason, _ error: RPCError?) {
        let unauthenticated = authenticatedApp.isEmpty
        switch reason {
        case .failure:
            // A refusal for the app's connection cap is counted on /metrics, not logged: a tenant
            // over its cap would otherwise log a line per attempt.
            guard let error, error.runtimeCode != .tooManyConnections,
                error.runtimeCode == .protocolViolation || error.code == .resourceExhausted
            else { break }
            if unauthenticated && !authenticationFailureLogged() { break }
            logger.notice("protocol error; closing connection", [("error", error.description)])
        case .idle:
            logger.debug("closing idle connection")
        case .handshakeTimeout:
            handshakeRefused(.timeout)
            if authenticationFailureLogged() {
                logger.info("closing connection: no handshake within \(limits.handshakeTimeoutMs) ms")
            }
        case .keepaliveTimeout:
            logger.info("closing connection: no answer to keepalive PING")
        case .frameTimeout:
            environment.observer?.transportEvent(.connectionCut(.frameTimeout))
            logger.info("closing connection: a frame's rest did not arrive within \(limits.frameTimeoutMs) ms")
        case .wireEnded:
            logger.debug("closing connection: the wire ended it")
        case .shutdown, .shutdownBeforeHandshake, .drained, .transportClosed:
            break
        }
    }
}
