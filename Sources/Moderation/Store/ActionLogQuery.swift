/// A slice of an app's action log, in seq order.
public struct ActionLogQuery: Sendable, Equatable {
    /// Only actions with a greater seq.
    public var afterSeq: UInt64
    public var limit: Int
    /// Only actions of this group (the store's key); nil for the whole app.
    public var groupID: Int64?
    /// Empty means all kinds.
    public var kinds: Set<ActionKind>
    /// Only actions by this uid ("@app" for the app).
    public var actor: String?
    /// Only actions on this uid.
    public var target: String?
    /// Only actions with a seq up to this one; nil for no bound. Filtered reads set it so that
    /// one call scans a bounded window of the log, however rare the matches.
    public var throughSeq: UInt64?

    public init(
        afterSeq: UInt64, limit: Int, groupID: Int64? = nil, kinds: Set<ActionKind> = [], actor: String? = nil, target: String? = nil,
        throughSeq: UInt64? = nil
    ) {
        self.afterSeq = afterSeq
        self.limit = limit
        self.groupID = groupID
        self.kinds = kinds
        self.actor = actor
        self.target = target
        self.throughSeq = throughSeq
    }
}

/// The retained range of an app's action log: seqs `prunedThrough + 1 ... headSeq`.
public struct LogBounds: Sendable, Equatable {
    /// Seq of the newest action; 0 when the app has none yet.
    public var headSeq: UInt64
    /// Every action up to this seq was pruned by retention; 0 when none was.
    public var prunedThrough: UInt64

    public init(headSeq: UInt64, prunedThrough: UInt64) {
        self.headSeq = headSeq
        self.prunedThrough = prunedThrough
    }

    /// The first seq still in the log (`headSeq + 1` when it is empty).
    public var oldestRetainedSeq: UInt64 { prunedThrough + 1 }
}

/// A ban past its expiry that the sweeper has not recorded yet.
public struct ExpiredBan: Sendable, Equatable {
    public var appID: Int64
    public var app: String
    public var guid: String
    public var uid: String

    public init(appID: Int64, app: String, guid: String, uid: String) {
        self.appID = appID
        self.app = app
        self.guid = guid
        self.uid = uid
    }
}
