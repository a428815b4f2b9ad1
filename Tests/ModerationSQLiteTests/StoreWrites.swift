import Moderation
import Synchronization
import TestSupport
import ThreadSupport

/// A `StoreWrite` made of closures, for driving the store directly.
final class ClosureWrite: StoreWrite, @unchecked Sendable {
    // Invariant: `body` runs on the writer thread only; `outcome` is guarded by its mutex.
    private let body: (any StoreTransaction) throws(ModerationError) -> Void
    let outcome = Mutex<ModerationError??>(nil)
    let done = BlockingSemaphore()

    init(_ body: @escaping (any StoreTransaction) throws(ModerationError) -> Void) {
        self.body = body
    }

    func apply(_ transaction: any StoreTransaction) throws(ModerationError) {
        try body(transaction)
    }

    func finish(_ failure: ModerationError?) {
        outcome.withLock { $0 = .some(failure) }
        done.signal()
    }

    /// Waits for `finish`; nil when the write succeeded.
    func wait() -> ModerationError? {
        done.wait()
        return outcome.withLock { $0! }
    }
}

/// Helpers reading the store directly.
enum StoreProbe {
    static func user(_ store: some ModerationStore, app: String, uid: String) throws -> StoredUser? {
        try store.read { (snapshot: any StoreSnapshot) throws(ModerationError) -> StoredUser? in
            guard let appID = try snapshot.appID(named: app) else { return nil }
            return try snapshot.user(appID: appID, uid: uid)
        }
    }

    static func log(_ store: some ModerationStore, app: String) throws -> [ActionRecord] {
        try store.read { (snapshot: any StoreSnapshot) throws(ModerationError) -> [ActionRecord] in
            guard let appID = try snapshot.appID(named: app) else { return [] }
            return try snapshot.actions(appID: appID, query: ActionLogQuery(afterSeq: 0, limit: 10_000))
        }
    }

    static func bounds(_ store: some ModerationStore, app: String) throws -> LogBounds {
        try store.read { (snapshot: any StoreSnapshot) throws(ModerationError) -> LogBounds in
            guard let appID = try snapshot.appID(named: app) else { return LogBounds(headSeq: 0, prunedThrough: 0) }
            return try snapshot.logBounds(appID: appID)
        }
    }
}
