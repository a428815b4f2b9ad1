import Synchronization

/// What clients can make the server hold, counted against one limit the operator states
/// (`--memory-budget`).
///
/// Every holder of client-driven memory — a connection's unwritten output and partial input
/// frame, a stream's deflate or inflate state, a subscription — reserves its bytes here before
/// it holds them and releases them when it lets go. Past the limit, new work is refused with
/// RESOURCE_EXHAUSTED (and the oldest slow consumers are cut) rather than the kernel's OOM
/// killer choosing what dies. The count is an estimate of what the server holds on a client's
/// behalf, not of the process's resident memory: the process's own fixed costs (code, caches,
/// thread stacks) come on top, as docs/OPERATIONS.md says.
///
/// Lock-free: one atomic per kind, so reserving costs a few atomic operations on any thread.
public final class MemoryBudget: Sendable {
    /// What the bytes are held for, so `/metrics` can say where the budget goes.
    public enum Kind: CaseIterable, Sendable {
        /// Replies and stream messages written by the server that the peer has not read yet.
        case outbound
        /// Incomplete frames kept until the rest arrives.
        case inbound
        /// zlib state of compressed streams (deflate) and of inflating request bodies.
        case compression
        /// Subscriptions to the event stream and what they buffer.
        case subscriptions
    }

    /// The limit in bytes (`Int.max` when the operator set none).
    public let limit: Int
    private let total = Atomic<Int>(0)
    private let outbound = Atomic<Int>(0)
    private let inbound = Atomic<Int>(0)
    private let compression = Atomic<Int>(0)
    private let subscriptions = Atomic<Int>(0)

    /// - Parameter limit: bytes clients may make the server hold; `nil` for no limit (every
    ///   reservation succeeds, and the counts are still kept for `/metrics`).
    public init(limit: Int?) {
        self.limit = limit ?? Int.max
    }

    /// A budget with no limit: what tests and embedded uses get by default.
    public static func unlimited() -> MemoryBudget { MemoryBudget(limit: nil) }

    /// Reserves `bytes` for `kind` when the budget has room for them; otherwise reserves nothing
    /// and returns false (the caller refuses the work).
    public func tryReserve(_ bytes: Int, for kind: Kind) -> Bool {
        precondition(bytes >= 0, "a reservation is never negative")
        var current = total.load(ordering: .relaxed)
        while true {
            guard current <= limit - bytes else { return false }
            let (exchanged, original) = total.weakCompareExchange(
                expected: current, desired: current + bytes, ordering: .relaxed)
            if exchanged { break }
            current = original
        }
        adjust(kind, by: bytes)
        return true
    }

    /// Reserves `bytes` for `kind` whatever the limit: for memory the server must hold once it
    /// is asked to (a reply already computed, a frame already read). It still counts, so the
    /// next `tryReserve` sees the budget spent.
    public func reserve(_ bytes: Int, for kind: Kind) {
        precondition(bytes >= 0, "a reservation is never negative")
        total.add(bytes, ordering: .relaxed)
        adjust(kind, by: bytes)
    }

    /// Gives back `bytes` reserved earlier for `kind`.
    public func release(_ bytes: Int, for kind: Kind) {
        precondition(bytes >= 0, "a release is never negative")
        total.subtract(bytes, ordering: .relaxed)
        adjust(kind, by: -bytes)
    }

    /// Bytes reserved now, of every kind.
    public var inUse: Int { total.load(ordering: .relaxed) }

    /// Bytes reserved now for `kind`.
    public func inUse(_ kind: Kind) -> Int {
        switch kind {
        case .outbound: outbound.load(ordering: .relaxed)
        case .inbound: inbound.load(ordering: .relaxed)
        case .compression: compression.load(ordering: .relaxed)
        case .subscriptions: subscriptions.load(ordering: .relaxed)
        }
    }

    /// True when the budget has no room left for `bytes` more.
    public func isExhausted(adding bytes: Int = 0) -> Bool { inUse > limit - bytes }

    private func adjust(_ kind: Kind, by bytes: Int) {
        switch kind {
        case .outbound: outbound.add(bytes, ordering: .relaxed)
        case .inbound: inbound.add(bytes, ordering: .relaxed)
        case .compression: compression.add(bytes, ordering: .relaxed)
        case .subscriptions: subscriptions.add(bytes, ordering: .relaxed)
        }
    }
}
