/// One page of a group's reports, as the store reads it, oldest first (by id, which grows with
/// time).
public struct ReportPageQuery: Sendable, Equatable {
    /// Open reports (true) or resolved ones (false).
    public var open: Bool
    /// Start after this report id; nil starts at the beginning.
    public var afterID: UInt64?
    /// How many rows at most.
    public var limit: Int
}
