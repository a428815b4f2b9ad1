/// Paging and filters of `ListGroupActions`.
public struct ListActionsOptions: Sendable, Equatable {
    /// Return actions with a greater seq (0: from the oldest retained).
    public var afterSeq: UInt64
    /// Page size 1–100; 0 means the default of 30.
    public var limit: Int
    /// A previous page's `nextCursor`; when set it replaces `afterSeq`.
    public var cursor: String
    /// Only these kinds; empty means all.
    public var kinds: Set<ActionKind>
    /// Only actions by this uid ("@app" for the app); empty means all.
    public var actor: String
    /// Only actions on this uid; empty means all.
    public var target: String

    public init(
        afterSeq: UInt64 = 0, limit: Int = 0, cursor: String = "", kinds: Set<ActionKind> = [], actor: String = "",
        target: String = ""
    ) {
        self.afterSeq = afterSeq
        self.limit = limit
        self.cursor = cursor
        self.kinds = kinds
        self.actor = actor
        self.target = target
    }
}
