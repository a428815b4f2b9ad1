import ProtoBridge

/// What every call goes through between its envelope and its handler, whatever the wire that
/// carried it (a CALL frame of our protocol, a gRPC request on HTTP/2): the same checks in the
/// same order, and the same start on the method's executor. A session does what is its own
/// (draining, its count of calls in flight, decoding its envelope) and hands the rest here.
extension ServerSession.Environment {
    /// The method registered at `path`, or why a call of it is refused before it runs: no such
    /// method, the app over its request rate, the memory budget spent — checked in that order.
    public func admit(path: String, appID: String, now: UInt64) throws(RPCError) -> RegisteredMethod {
        guard let method = methods[path] else {
            throw .unimplemented(method: path.isEmpty ? "(empty method)" : path)
        }
        if let rateLimiter, let retryAfterMs = rateLimiter.retryAfter(app: appID, now: now) {
            observer?.callRateLimited(app: appID)
            throw RPCError(
                .rateLimited, "app \(appID) is over its request rate; retry after \(retryAfterMs) ms",
                details: ["retry_after_ms": String(retryAfterMs)])
        }
        if memoryBudget.isSpent {
            throw RPCError(
                .overloaded, "the server's memory budget is spent; the call was not run, retry later")
        }
        return method
    }

    /// Decodes `body` and starts `method`'s handler: on this thread, or on a worker when the
    /// method's executor says so (a call whose deadline passed while it waited for the worker is
    /// not run and ends with DEADLINE_EXCEEDED). Throws INVALID_ARGUMENT for a body that does not
    /// decode, before anything ran.
    public func start(
        _ method: RegisteredMethod, body: UnsafeRawBufferPointer, context: CallContext, call: ServerCall
    ) throws(RPCError) {
        var placement = RegisteredMethod.Placement(afterTurnInput: afterTurnInput)
        if method.executor == .workerPool {
            let clock = now
            let submit = self.offload
            let isStream = method.description.serverStreaming
            placement.offload = { work in
                submit {
                    if context.isExpired(now: clock()) {
                        call.end(.deadlineExceeded("the deadline passed before the call ran"), isStream: isStream)
                        return
                    }
                    work()
                }
            }
        }
        try method.start(body, context, call, limits.streamPendingLimitBytes, placement)
    }
}
