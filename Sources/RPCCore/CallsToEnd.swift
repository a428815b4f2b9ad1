/// The calls of a closed connection not yet ended, of either wire (our protocol's session, the
/// gRPC session): ending a call runs its termination handlers (a subscription's release, say), so
/// a connection that closes with thousands of streams has them ended a slice per loop turn rather
/// than all in the turn that saw it close (`ServerSession.callsEndedAtOnce`).
public struct CallsToEnd {
    private var calls: [ServerCall] = []

    public init() {}

    /// True when every call has been ended.
    public var isEmpty: Bool { calls.isEmpty }

    /// Adds calls to end.
    public mutating func append(contentsOf more: some Sequence<ServerCall>) {
        calls.append(contentsOf: more)
    }

    /// Ends up to `limit` more of the calls with CANCELLED (their termination handlers told the
    /// connection closed); returns how many it ended.
    @discardableResult
    public mutating func end(limit: Int) -> Int {
        let count = min(limit, calls.count)
        let error = RPCError.cancelled("the connection closed before the call completed")
        for _ in 0..<count {
            let call = calls.removeLast()
            _ = call.complete(error)
            call.terminate(.connectionClosed)
        }
        return count
    }
}
