public import Moderation
import Synchronization
public import ThreadSupport

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

extension ClosureWrite {
    /// Submits `writes` to `store` as one batch: a gate write holds the writer until all are
    /// queued, so every one of them is committed in the next batch, together (for a store with
    /// several writers, give the writes the same affinity).
    public static func submitAsOneBatch(_ writes: [ClosureWrite], to store: some ModerationStore) {
        let release = BlockingSemaphore()
        let entered = BlockingSemaphore()
        let gate = ClosureWrite(affinity: writes.first?.affinity) { _ throws(ModerationError) in
            entered.signal()
            release.wait()
        }
        store.submit(gate)
        entered.wait()
        for write in writes { store.submit(write) }
        release.signal()
        _ = gate.wait()
    }

    /// Submits to `store` a write that adds user "pending" to app "app" and locks group "g" as a
    /// write of it would, and returns once it runs: its transaction stays open until `release`
    /// is signalled.
    public static func holdPendingUser(in store: some ModerationStore) -> (
        holder: ClosureWrite, release: BlockingSemaphore
    ) {
        let entered = BlockingSemaphore()
        let release = BlockingSemaphore()
        let holder = ClosureWrite { (tx) throws(ModerationError) in
            let appID = try tx.createApp(named: "app")
            _ = try tx.insertUser(appID: appID, User(uid: "pending"))
            _ = try tx.groupForUpdate(appID: appID, guid: "g")
            entered.signal()
            release.wait()
        }
        store.submit(holder)
        entered.wait()
        return (holder, release)
    }
}
