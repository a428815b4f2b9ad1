public import Moderation
import Synchronization
import ThreadSupport

/// A `StoreWrite` made of closures, for driving a store directly.
public final class ClosureWrite: StoreWrite, @unchecked Sendable {
    // Invariant: `body` runs on the writer thread only; `outcome` is guarded by its mutex.
    private let body: (any StoreTransaction) throws(ModerationError) -> Void
    private let outcome = Mutex<ModerationError??>(nil)
    private let done = BlockingSemaphore()
    public let affinity: String?
    public let footprint: WriteFootprint?

    /// - Parameters:
    ///   - affinity: the app the write is for, which keeps it on that app's writer (a store with
    ///     several writers spreads writes without one).
    ///   - footprint: what the write declares it will read.
    public init(
        affinity: String? = nil, footprint: WriteFootprint? = nil,
        _ body: @escaping (any StoreTransaction) throws(ModerationError) -> Void
    ) {
        self.affinity = affinity
        self.footprint = footprint
        self.body = body
    }

    public func apply(_ transaction: any StoreTransaction) throws(ModerationError) {
        try body(transaction)
    }

    public func finish(_ failure: ModerationError?) {
        outcome.withLock { $0 = .some(failure) }
        done.signal()
    }

    /// Waits for `finish`; nil when the write succeeded.
    public func wait() -> ModerationError? {
        done.wait()
        return outcome.withLock { $0! }
    }
}
