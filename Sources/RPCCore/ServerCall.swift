import Synchronization

/// One live call, shared between its connection's loop and whatever thread completes it.
///
/// Exactly one completion wins: the handler's reply, a deadline, a cancel or the connection's
/// end — `claimCompletion()` tells each contender whether it is first.
public final class ServerCall: Sendable {
    public let streamID: UInt32
    /// How the call's response messages are compressed (its wire chose it from what the client
    /// accepts).
    public let compression: MessageCompression
    let port: any CallPort
    /// Who called what, for the observer's record of the call's end.
    let context: CallContext
    let methodIndex: Int?
    let isInternal: Bool
    let startedAt: UInt64
    let observer: (any CallObserver)?
    let clock: @Sendable () -> UInt64
    /// The server's memory budget, for what the call's stream holds (its deflate state); nil
    /// for a call made outside a server (tests), which counts nothing.
    let memoryBudget: MemoryBudget?
    /// The wire the call came on, for its record.
    let wire: WireKind
    private let completed = Atomic<Bool>(false)
    private let termination = Mutex<TerminationState>(TerminationState())

    public init(
        context: CallContext, compression: MessageCompression = .none, port: any CallPort, methodIndex: Int? = nil,
        isInternal: Bool? = nil, observer: (any CallObserver)? = nil, clock: @escaping @Sendable () -> UInt64 = { 0 },
        memoryBudget: MemoryBudget? = nil, wire: WireKind = .mrpc
    ) {
        self.streamID = context.streamID
        self.compression = compression
        self.port = port
        self.context = context
        self.methodIndex = methodIndex
        self.isInternal = isInternal ?? RuntimeServices.isInternal(path: context.method)
        self.wire = wire
        self.observer = observer
        observer?.callStarted(methodIndex: methodIndex, wire: wire)
        self.clock = clock
        self.memoryBudget = memoryBudget
        startedAt = clock()
    }

    /// Claims the call's one completion: true for the first caller only (later completions must
    /// send nothing), who also reports to the observer how the call ended.
    public func complete(_ code: StatusCode, errorCode: String = "") -> Bool {
        guard completed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else {
            return false
        }
        if let observer {
            observer.callEnded(
                CallRecord(
                    context: context, methodIndex: methodIndex, code: code, errorCode: errorCode,
                    durationNanoseconds: clock() - startedAt, isInternal: isInternal, wire: wire))
        }
        return true
    }

    /// `complete` with an error's status.
    public func complete(_ error: RPCError) -> Bool { complete(error.code, errorCode: error.errorCode) }

    /// `complete` for the call's own reply or trailers (its responder or stream). When it wins,
    /// the termination handlers are dropped unrun, and later ones are not kept: they are for ends
    /// from outside, which no longer concern a call that completed by itself. A handler usually
    /// captures its stream or responder, and so this call: kept, it would hold the call, the
    /// stream and whatever the handler captured (a subscription) alive for good.
    public func completeByHandler(_ code: StatusCode, errorCode: String = "") -> Bool {
        guard complete(code, errorCode: errorCode) else { return false }
        termination.withLock { state in
            state.completedByHandler = true
            state.handlers = []
        }
        return true
    }

    /// `completeByHandler` with an error's status.
    public func completeByHandler(_ error: RPCError) -> Bool {
        completeByHandler(error.code, errorCode: error.errorCode)
    }

    /// Ends the call with `error` unless it already completed.
    public func end(_ error: RPCError) {
        guard complete(error) else { return }
        port.send(streamID: streamID, .end(error))
    }

    /// Refuses the call before its handler ran (its request did not inflate or decode) unless it
    /// already completed.
    public func refuse(_ error: RPCError) {
        guard complete(error) else { return }
        port.send(streamID: streamID, .refused(error))
    }

    /// True once the call has completed, been cancelled or lost its connection.
    public var isCompleted: Bool { completed.load(ordering: .acquiring) }

    /// Registers a handler called once when the call ends other than by its own completion
    /// (cancel, deadline, connection closed, server draining). Runs at once if that already
    /// happened; never runs (and is not kept) once the call completed by itself.
    public func onTermination(_ handler: @escaping @Sendable (CallTermination) -> Void) {
        let fired: CallTermination? = termination.withLock { state in
            if let reason = state.reason { return reason }
            if !state.completedByHandler { state.handlers.append(handler) }
            return nil
        }
        if let fired { handler(fired) }
    }

    /// Records why the call ends and runs its termination handlers (once).
    public func terminate(_ reason: CallTermination) {
        let handlers: [@Sendable (CallTermination) -> Void] = termination.withLock { state in
            guard state.reason == nil else { return [] }
            state.reason = reason
            defer { state.handlers = [] }
            return state.handlers
        }
        for handler in handlers { handler(reason) }
    }

    private struct TerminationState {
        var reason: CallTermination?
        var handlers: [@Sendable (CallTermination) -> Void] = []
        /// The call's own reply or trailers won: handlers are no longer kept.
        var completedByHandler = false
    }
}

/// Why a call ended other than by its own reply or trailers.
public enum CallTermination: Sendable, Equatable {
    /// The client sent CANCEL.
    case cancelled
    /// The call's deadline passed.
    case deadlineExceeded
    /// The connection closed.
    case connectionClosed
    /// The server is shutting down: a stream should end now with UNAVAILABLE (and where to resume).
    case draining
}
