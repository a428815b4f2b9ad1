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
