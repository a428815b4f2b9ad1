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
        afterSeq: UInt64, limit: Int, groupID: Int64? = nil, kinds: Set<ActionKind> = [], actor: String? = nil,
        target: String? = nil,
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
