/// One page of a group's action log (`ListGroupActions`), oldest first.
public struct ActionPage: Sendable, Equatable {
    public var actions: [ActionRecord]
    /// Opaque cursor of the next page; empty exactly when nothing is left now.
    public var nextCursor: String
    /// Seq of the last action in the page, or where the page started when it is empty: the
    /// `afterSeq` to resume from.
    public var lastSeq: UInt64
}
