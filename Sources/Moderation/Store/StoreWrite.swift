/// One unit of change queued to a store's writer.
///
/// The store runs `apply` inside the current batch transaction, atomically on its own: when it
/// throws, everything it wrote is rolled back and the rest of the batch goes on (a store may run
/// `apply` again if it has to redo the batch). After the batch's commit is durable (or failed)
/// the store calls `finish` exactly once, on any thread, ordered after the last `apply`.
public protocol StoreWrite: AnyObject, Sendable {
    /// Makes the change. Called on the writer; throwing rolls back this write alone.
    func apply(_ transaction: any StoreTransaction) throws(ModerationError)

    /// Called once the outcome is final: nil when `apply` returned and the batch is durable;
    /// the error `apply` threw; or `.internal` (`.storeUnavailable` for a store that lost its
    /// server) when the batch could not be committed (then nothing of this write was kept —
    /// unless the connection was lost during COMMIT, which the message says: then the outcome is
    /// unknown).
    func finish(_ failure: ModerationError?)

    /// The app whose data the write changes, when it is a single one: a store with several
    /// writers keeps one app's writes on one of them, so they commit in the order they were
    /// submitted. nil (the default): any writer.
    var affinity: String? { get }

    /// What the write is about to read, when it is known before it runs (nil, the default: not
    /// known). A hint: a store may read it for a whole batch at once, and stays correct whatever
    /// the write reads in the end.
    var footprint: WriteFootprint? { get }
}

extension StoreWrite {
    public var affinity: String? { nil }
    public var footprint: WriteFootprint? { nil }
}

/// A group of an app and some users' standing in it (their row, membership and ban): what a
/// write on one group reads first. A store whose every read is a round trip (PostgreSQL) reads
/// the footprints of a batch's writes in one statement per app before running them, so the
/// writes then find what they need in its cache.
public struct WriteFootprint: Sendable, Equatable {
    public let app: String
    public let guid: String
    /// The actor first, when there is one, then the users the write acts on.
    public let uids: [String]
    /// The reply the write looks up first when it carries an idempotency key (`idempotentReply`).
    public let replay: ReplayKey?

    public init(app: String, guid: String, uids: [String], replay: ReplayKey? = nil) {
        self.app = app
        self.guid = guid
        self.uids = uids
        self.replay = replay
    }
}

/// Whose stored reply an idempotency key names, within the footprint's app: the acting user
/// ("" for the app itself) and the key.
public struct ReplayKey: Sendable, Hashable {
    public let actor: String
    public let key: String

    public init(actor: String, key: String) {
        self.actor = actor
        self.key = key
    }
}
