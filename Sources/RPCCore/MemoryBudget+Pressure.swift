/// How the transport holds clients to the budget: a soft limit below the operator's limit, a
/// small holding every connection keeps whatever the budget says, and the allowance of unwritten
/// output a connection may reach before it takes no more frames.
///
/// - Below `softLimit`, a connection may hold up to its own limit (`maxPendingOutputBytes`) of
///   unwritten output, but no more than the room left under the soft limit.
/// - Above `softLimit` (under pressure), a connection holding more than `smallHolding` takes no
///   more frames and is not read, partial frames do not grow, and the loops cut the connections
///   holding the most until the count is back under the soft limit.
/// - Above `limit` (spent), new calls are refused with ERR_OVERLOADED, and a connection holding
///   anything takes no more frames.
///
/// `reserve`, the room between the two, is what lets clients that read their replies (Echo, a
/// health check) keep being served while hostile ones are stopped and cut: their replies leave
/// within the loop turn, so they never hold more than `smallHolding`.
extension MemoryBudget {
    /// What any connection may hold whatever the budget says: a few small replies and control
    /// frames, so that a tiny reply always gets through.
    public static let smallHolding = 64 * 1024

    /// True when the operator set a limit.
    public var isLimited: Bool { limit != Int.max }

    /// The room kept between the soft limit and the limit: an eighth of the limit, at most 64 MiB.
    public var reserve: Int { isLimited ? min(limit / 8, 64 << 20) : 0 }

    /// Past this count, hostile holders are stopped and the largest are cut.
    public var softLimit: Int { limit - reserve }

    /// True when the count is past the soft limit: holders stop growing and the largest are cut.
    /// (No atomic load without a limit: the session asks on every call.)
    public var isUnderPressure: Bool { isLimited && inUse > softLimit }

    /// True when the count is past the limit: new calls are refused.
    public var isSpent: Bool { isLimited && inUse > limit }

    /// How much unwritten output a connection that now holds `held` bytes (output and partial
    /// input) may hold before it takes no more frames.
    /// - Parameters:
    ///   - perConnection: the connection's own limit (`maxPendingOutputBytes`).
    ///   - sharers: how many threads may grant room at the same moment (the event loops): each
    ///     grants at most its share of the room left, so that together they cannot overshoot it
    ///     (each sees the count before the others' grants are in it).
    public func outputAllowance(holding held: Int, perConnection: Int, sharers: Int = 1) -> Int {
        guard isLimited else { return perConnection }
        let used = inUse
        if used > limit { return 0 }
        if used > softLimit { return Self.smallHolding }
        return min(perConnection, max(Self.smallHolding, (softLimit - used) / max(sharers, 1) + held))
    }
}
