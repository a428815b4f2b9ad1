/// The buckets both stores count their commits in, the same for either so that the server's
/// metrics of one store read like the other's.
public enum StoreHistogram {
    /// Upper bounds of a batch-size histogram (writes per commit).
    public static let batchSizeBounds: [Int] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    /// Upper bounds of a latency histogram, in seconds.
    public static let secondsBounds: [Double] = [
        0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1,
    ]

    /// The bucket `value` counts in: the first whose upper bound it does not exceed, or the one
    /// past the bounds when it exceeds them all (histograms keep one more bucket for those).
    public static func bucket<Value: Comparable>(of value: Value, bounds: [Value]) -> Int {
        bounds.firstIndex(where: { value <= $0 }) ?? bounds.count
    }
}
