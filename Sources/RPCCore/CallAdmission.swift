import ProtoBridge

/// Who a call comes from, as its key says: an app, or nobody (no key at all), which only the
/// methods registered as needing none (the health checks) may serve.
public enum Authenticated: Sendable, Equatable {
    case app(String)
    case anonymous

    /// The app's id, empty for no app.
    public var appID: String {
        if case .app(let id) = self { return id }
        return ""
    }
}

/// What every call goes through between its head and its handler, whatever the wire that
/// carried it: the same checks in the same order, and the same start on the method's executor.
extension ServerEnvironment {
    /// The method registered at `path`, or why a call of it is refused before it runs: no such
    /// method, a caller without a key for a method that needs one, the app over its request
    /// rate, the memory budget spent — checked in that order.
    public func admit(path: String, caller: Authenticated, now: UInt64) throws(RPCError) -> RegisteredMethod {
        guard let method = methods[path] else {
            throw .unimplemented(method: path.isEmpty ? "(empty method)" : path)
        }
        return try admit(method, caller: caller, now: now)
    }

    /// `admit(path:caller:now:)` for a method already found.
    public func admit(_ method: RegisteredMethod, caller: Authenticated, now: UInt64) throws(RPCError)
        -> RegisteredMethod
    {
        let path = method.path
        guard case .app(let appID) = caller else {
            guard method.allowsAnonymous else {
                throw .unauthenticated(
                    "\(path) needs an API key, and the call carries none: only the health checks answer without one")
            }
            return method
        }
        if let rateLimiter, let retryAfterMs = rateLimiter.retryAfter(app: appID, now: now) {
            observer?.callRateLimited(app: appID)
            throw RPCError(
                .rateLimited, "app \(appID) is over its request rate; retry after \(retryAfterMs) ms",
                details: ["retry_after_ms": String(retryAfterMs)])
        }
        if memoryBudget.isSpent {
            throw .overloaded("the server's memory budget is spent; the call was not run, retry later")
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
            placement.offload = { work in
                submit {
                    if context.isExpired(now: clock()) {
                        call.end(.deadlineExceeded("the deadline passed before the call ran"))
                        return
                    }
                    work()
                }
            }
        }
        try method.start(body, context, call, limits.streamPendingLimitBytes, placement)
    }
}
